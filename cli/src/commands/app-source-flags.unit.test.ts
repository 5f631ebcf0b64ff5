import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { apiv1 } from '@capstan/proto';
import { applySetFlags } from './app-set.js';
import { addSourceFlags, applySourceFlags, NO_SOURCE_FLAGS, type SourceFlags } from './app-source-flags.js';

const parse = (args: string[]): SourceFlags => {
  const cmd = addSourceFlags(new Command('x').exitOverride());
  cmd.parse(args, { from: 'user' });
  return cmd.opts<SourceFlags>();
};
const sourceJson = (s: apiv1.ApplicationSource) =>
  apiv1.ApplicationSource.toJSON(s) as Record<string, unknown>;
const base = apiv1.ApplicationSource.fromJSON({ repoURL: 'https://git.example.com/a.git', path: 'chart' });

describe("argocd's source flags on capstan app create/set", () => {
  it('turns Helm flags into spec.source.helm as argocd does', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'capstan-cli-'));
    writeFileSync(path.join(dir, 'v.yaml'), 'secret: x\n');
    const out = applySourceFlags(
      base,
      parse([
        '--values',
        'values-prod.yaml',
        '--values-literal-file',
        path.join(dir, 'v.yaml'),
        '--helm-set',
        'replicas=3',
        '--helm-set-string',
        'image.tag=1.0',
        '--helm-set-file',
        'cfg=files/cfg.txt',
        '--release-name',
        'web',
        '--helm-skip-crds',
        '--helm-api-versions',
        'x/v1',
      ]),
    );
    expect(sourceJson(out).helm).toEqual({
      valueFiles: ['values-prod.yaml'],
      values: 'secret: x\n',
      parameters: [
        { name: 'replicas', value: '3' },
        { name: 'image.tag', value: '1.0', forceString: true },
      ],
      fileParameters: [{ name: 'cfg', path: 'files/cfg.txt' }],
      releaseName: 'web',
      skipCrds: true,
      apiVersions: ['x/v1'],
    });
    // app set: a parameter replaces the one of the same name, others stay
    const again = applySourceFlags(out, parse(['--helm-set', 'replicas=5']));
    expect(again.helm?.parameters.map((p) => `${p.name}=${p.value}`)).toEqual([
      'replicas=5',
      'image.tag=1.0',
    ]);
    expect(() => applySourceFlags(base, { ...NO_SOURCE_FLAGS, helmSet: ['novalue'] })).toThrow(
      /--helm-set: expected name=value/,
    );
  });

  it('turns Kustomize and directory flags into their blocks, merging images by name', () => {
    const k = applySourceFlags(
      base,
      parse([
        '--kustomize-image',
        'nginx=nginx:1.27',
        '--nameprefix',
        'p-',
        '--kustomize-common-label',
        'team=a',
        '--kustomize-replica',
        'web=3',
        '--kustomize-namespace',
        'ns',
      ]),
    );
    expect(sourceJson(k).kustomize).toEqual({
      images: ['nginx=nginx:1.27'],
      namePrefix: 'p-',
      commonLabels: { team: 'a' },
      replicas: [{ name: 'web', count: '3' }],
      namespace: 'ns',
    });
    const k2 = applySourceFlags(
      k,
      parse(['--kustomize-image', 'nginx:1.28', '--kustomize-image', 'redis:7']),
    );
    expect(k2.kustomize?.images).toEqual(['nginx:1.28', 'redis:7']);
    const d = applySourceFlags(
      base,
      parse([
        '--directory-recurse',
        '--directory-include',
        '{a,b}/*.yaml',
        '--jsonnet-ext-var-str',
        'env=prod',
        '--jsonnet-tla-code',
        'n=1+1',
        '--jsonnet-libs',
        'vendor',
      ]),
    );
    expect(sourceJson(d).directory).toEqual({
      recurse: true,
      include: '{a,b}/*.yaml',
      jsonnet: {
        extVars: [{ name: 'env', value: 'prod' }],
        tlas: [{ name: 'n', value: '1+1', code: true }],
        libs: ['vendor'],
      },
    });
    expect(applySourceFlags(base, NO_SOURCE_FLAGS)).toEqual({
      ...base,
      helm: undefined,
      kustomize: undefined,
      directory: undefined,
    });
  });

  it('app set keeps the source tools it is not told to change', () => {
    const app = apiv1.Application.fromJSON({
      metadata: { name: 'web' },
      spec: {
        project: 'p',
        source: {
          repoURL: 'https://git.example.com/a.git',
          helm: { valueFiles: ['a.yaml'], releaseName: 'r' },
        },
        destination: { server: 'https://kubernetes.default.svc' },
      },
    });
    const out = applySetFlags(app, { syncOption: [], helmSet: ['x=1'] });
    expect(apiv1.ApplicationSource.toJSON(out.spec!.source!)).toMatchObject({
      helm: { valueFiles: ['a.yaml'], releaseName: 'r', parameters: [{ name: 'x', value: '1' }] },
    });
  });
});
