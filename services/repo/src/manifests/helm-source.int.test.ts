// Argo CD's spec.source.helm options, rendered by the real helm binary from a real git repository.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repov1 } from '@capstan/proto';
import { ValidationError } from '@capstan/service';
import type { HelmSource } from '@capstan/policy';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { CheckoutStore } from '../checkouts/checkout-store.js';
import { LOCAL_GIT_EGRESS } from '../test-support/egress.js';
import { sourceOptionsOf } from '../rpc/source-options.js';
import { cleanSetValue, helmArgs } from './helm-source.js';
import { ManifestGenerator } from './manifest-generator.js';
import { ManifestRenderError, PathEscapeError } from './manifest-errors.js';
import { obtainedTool } from '@capstan/test/infra';

const TEMPLATE = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cm
  namespace: {{ .Release.Namespace }}
data:
  replicas: {{ .Values.replicas | quote }}
  replicasKind: {{ kindOf .Values.replicas | quote }}
  tag: {{ .Values.image.tag | quote }}
  list: {{ .Values.list | toJson | quote }}
  secret: {{ .Values.secret | default "" | quote }}
  file: {{ .Values.fileContent | default "" | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  hasFoo: {{ .Capabilities.APIVersions.Has "foo.example.com/v1" | quote }}
`;

type Cm = { kind: string; metadata: { name: string; namespace?: string }; data: Record<string, string> };

describe('Helm source options (Argo CD spec.source.helm) with the real helm', () => {
  let server: GitServer;
  let cacheDir: string;
  let generator: ManifestGenerator;
  let repo: TestRepository;

  beforeAll(async () => {
    const helm = obtainedTool('obtain-helm.sh');
    server = await startGitServer();
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'capstan-helm-'));
    const store = await CheckoutStore.create({
      cacheDir,
      maxCacheBytes: 100e6,
      maxRepoBytes: 50e6,
      refCacheTtlMs: 60_000,
      gitTimeoutMs: 30_000,
      egress: LOCAL_GIT_EGRESS,
    });
    generator = new ManifestGenerator(store, {
      kustomizePath: obtainedTool('obtain-kustomize.sh'),
      helmPath: helm,
      scratchDir: cacheDir,
      renderTimeoutMs: 60_000,
      cacheEntries: 100,
    });
    repo = await server.createRepository('charts.git');
    await repo.commit({
      'charts/demo/Chart.yaml': 'apiVersion: v2\nname: demo\nversion: 0.1.0\n',
      'charts/demo/values.yaml': 'replicas: 1\nimage:\n  tag: base\nlist: []\n',
      'charts/demo/values-prod.yaml': 'replicas: 3\n',
      'charts/demo/templates/cm.yaml': TEMPLATE,
      'charts/demo/templates/tests/test.yaml':
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}-test\n  annotations:\n    helm.sh/hook: test\nspec:\n  containers: []\n',
      'charts/demo/crds/crd.yaml':
        'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n',
      'shared/common.yaml': 'image:\n  tag: shared\n',
      'shared/file.txt': 'from a file',
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await rm(cacheDir, { recursive: true, force: true });
  });

  const render = async (helm: HelmSource) => {
    const out = await generator.generate(
      { repoURL: repo.url, targetRevision: 'main', path: 'charts/demo', helm },
      null,
    );
    return out.manifests.map((m) => JSON.parse(m) as Cm);
  };
  const configMap = async (helm: HelmSource) => (await render(helm)).find((o) => o.kind === 'ConfigMap')!;

  it('uses the release name and namespace, and includes CRDs and tests by default', async () => {
    const objs = await render({ releaseName: 'web', namespace: 'team-a' });
    expect(objs.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/web-cm',
      'CustomResourceDefinition/widgets.example.com',
      'Pod/web-test',
    ]);
    expect(objs.find((o) => o.kind === 'ConfigMap')!.metadata.namespace).toBe('team-a');
  });

  it('skipCrds and skipTests leave those out', async () => {
    const objs = await render({ releaseName: 'web', skipCrds: true, skipTests: true });
    expect(objs.map((o) => o.kind)).toEqual(['ConfigMap']);
  });

  it('merges value files (relative to the chart, or to the repository root with "/") then values', async () => {
    const cm = await configMap({
      releaseName: 'web',
      valueFiles: ['values-prod.yaml', '/shared/common.yaml'],
      values: 'secret: s3cr3t\n',
    });
    expect(cm.data).toMatchObject({
      replicas: '3',
      replicasKind: 'float64',
      tag: 'shared',
      secret: 's3cr3t',
    });
  });

  it('valuesObject wins over values, as in Argo CD', async () => {
    const cm = await configMap({
      releaseName: 'web',
      values: 'secret: from-values\n',
      valuesObject: { secret: 'from-object', image: { tag: 'obj' } },
    });
    expect(cm.data).toMatchObject({ secret: 'from-object', tag: 'obj' });
  });

  it('parameters become --set (typed) or --set-string, and win over values; commas stay in the value', async () => {
    const cm = await configMap({
      releaseName: 'web',
      values: 'replicas: 9\n',
      parameters: [
        { name: 'replicas', value: '5' },
        { name: 'image.tag', value: 'a,b', forceString: true },
        { name: 'list', value: '{x,y}' },
      ],
    });
    expect(cm.data).toMatchObject({ replicas: '5', replicasKind: 'int64', tag: 'a,b', list: '["x","y"]' });
    const asString = await configMap({
      releaseName: 'web',
      parameters: [{ name: 'replicas', value: '5', forceString: true }],
    });
    expect(asString.data.replicasKind).toBe('string');
  });

  it('fileParameters read a file of the repository (--set-file)', async () => {
    const cm = await configMap({
      releaseName: 'web',
      fileParameters: [{ name: 'fileContent', path: '../../shared/file.txt' }],
    });
    expect(cm.data.file).toBe('from a file');
  });

  it('kubeVersion and apiVersions reach .Capabilities', async () => {
    const cm = await configMap({
      releaseName: 'web',
      kubeVersion: '1.29.4',
      apiVersions: ['foo.example.com/v1'],
    });
    expect(cm.data).toMatchObject({ kube: 'v1.29.4', hasFoo: 'true' });
    expect((await configMap({ releaseName: 'web' })).data.hasFoo).toBe('false');
  });

  it('a missing value file fails unless ignoreMissingValueFiles', async () => {
    await expect(render({ releaseName: 'web', valueFiles: ['nope.yaml'] })).rejects.toThrow(
      /value file nope\.yaml not found/,
    );
    const cm = await configMap({
      releaseName: 'web',
      valueFiles: ['nope.yaml', 'values-prod.yaml'],
      ignoreMissingValueFiles: true,
    });
    expect(cm.data.replicas).toBe('3');
  });

  it('refuses files outside the repository and names the values field, not the scratch file, on errors', async () => {
    await expect(render({ valueFiles: ['../../../etc/passwd'] })).rejects.toBeInstanceOf(PathEscapeError);
    await expect(
      render({ fileParameters: [{ name: 'x', path: '../../../../etc/hostname' }] }),
    ).rejects.toBeInstanceOf(PathEscapeError);
    const err = await render({ releaseName: 'web', values: 'a: [unclosed\n' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ManifestRenderError);
    expect((err as Error).message).toContain('spec.source.helm.values');
    expect((err as Error).message).not.toContain(cacheDir);
  });

  it('keeps inline values off the command line and keys the cache on every option', async () => {
    const repoFiles = { root: '/nonexistent', appPath: 'charts/demo', what: 'test' };
    const args = await helmArgs(repoFiles, { releaseName: 'r', values: 'secret: x' }, '/scratch/values.yaml');
    expect(args.join(' ')).not.toContain('secret');
    expect(args).toEqual(['template', 'r', '.', '--values=/scratch/values.yaml', '--include-crds']);
    const a = await configMap({ releaseName: 'web', values: 'secret: one\n' });
    const b = await configMap({ releaseName: 'web', values: 'secret: two\n' });
    expect([a.data.secret, b.data.secret]).toEqual(['one', 'two']);
    expect(cleanSetValue('a,b\\,c')).toBe('a\\,b\\,c');
    expect(cleanSetValue('{a,b}')).toBe('{a,b}');
  });

  it('validates the request at the repo service edge with field paths', () => {
    const bad = () =>
      sourceOptionsOf(
        repov1.ManifestSource.fromPartial({
          repoUrl: repo.url,
          path: 'charts/demo',
          helm: {
            valueFiles: ['ok.yaml', 'https://169.254.169.254/latest/meta-data'],
            parameters: [{ name: 'a', value: '1' }, { name: 'b' }, { name: 'x=y', value: '2' }],
            version: 'v2',
            releaseName: 'Not_A_Release',
          },
        }),
      );
    expect(bad).toThrow(ValidationError);
    const violations = (() => {
      try {
        bad();
      } catch (err) {
        return (err as ValidationError).violations.map((v) => `${v.field}: ${v.description}`);
      }
      return [];
    })();
    expect(violations).toEqual([
      'source.helm.valueFiles[1]: must be a file in the repository: remote (URL) files are not supported',
      'source.helm.parameters[2].name: must be a Helm value path such as image.tag or list[0].name (no "=", "," or spaces)',
      'source.helm.releaseName: must be a valid Helm release name: lowercase DNS name of at most 53 characters',
      'source.helm.version: only "v3" is supported (as Argo CD 2.x+ supports)',
    ]);
    const tooMany = repov1.ManifestSource.fromPartial({
      repoUrl: repo.url,
      helm: { parameters: Array.from({ length: 1001 }, (_, i) => ({ name: `p${i}`, value: 'v' })) },
    });
    expect(() => sourceOptionsOf(tooMany)).toThrow(/source\.helm\.parameters: at most 1000 parameters/);
    expect(
      sourceOptionsOf(
        repov1.ManifestSource.fromPartial({ helm: { valuesObjectJson: '{"a":1}', skipCrds: true } }),
      ),
    ).toEqual({ helm: { skipCrds: true, valuesObject: { a: 1 } } });
  });
});
