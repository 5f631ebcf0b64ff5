import { describe, expect, it } from 'vitest';
import { validateApplication } from '../project/validate.js';
import { helmValuesText, sourceFileProblem } from './source-option-issues.js';

const app = (source: Record<string, unknown>) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: { name: 'web' },
  spec: {
    project: 'default',
    destination: { server: 'https://kubernetes.default.svc', namespace: 'web' },
    source: { repoURL: 'https://git.example.com/apps.git', path: 'charts/web', ...source },
  },
});
const issues = (source: Record<string, unknown>) => {
  const r = validateApplication(app(source));
  return r.ok ? [] : r.issues.map((i) => `${i.path}: ${i.message}`);
};

describe('source options (spec.source.helm / kustomize / directory) at write time', () => {
  it("accepts Argo CD's helm fields", () => {
    expect(
      issues({
        helm: {
          releaseName: 'web.v2',
          namespace: 'team-a',
          valueFiles: ['values.yaml', '/shared/common.yaml', '../common.yaml'],
          values: 'a: 1\n',
          valuesObject: { a: { b: [1, 2] } },
          parameters: [
            { name: 'image.tag', value: 'v1' },
            { name: 'list[0].x', value: 'y', forceString: true },
          ],
          fileParameters: [{ name: 'cfg', path: 'files/cfg.txt' }],
          version: 'v3',
          passCredentials: true,
          ignoreMissingValueFiles: true,
          skipCrds: true,
          skipTests: true,
          skipSchemaValidation: true,
          kubeVersion: '1.31.0',
          apiVersions: ['apps/v1', 'monitoring.coreos.com/v1/ServiceMonitor'],
        },
      }),
    ).toEqual([]);
  });

  it('names each bad helm field by its path', () => {
    expect(
      issues({
        helm: {
          valueFiles: ['https://evil.example.com/v.yaml', '../../../etc/passwd'],
          parameters: [
            { name: 'a', value: '1' },
            { name: 'b', value: '2' },
            { name: '', value: '3' },
          ],
          fileParameters: [{ name: 'x', path: 'http://169.254.169.254/' }],
          version: 'v2',
          valueFile: ['typo.yaml'],
        },
      }),
    ).toEqual([
      'spec.source.helm.parameters[2].name: must not be empty',
      'spec.source.helm.valueFile: unknown field',
    ]);
    expect(
      issues({
        helm: {
          valueFiles: ['https://evil.example.com/v.yaml', '../../../etc/passwd'],
          parameters: [
            { name: 'a', value: '1' },
            { name: 'b,c', value: '2' },
          ],
          fileParameters: [{ name: 'x', path: 'http://169.254.169.254/' }],
          version: 'v2',
          kubeVersion: 'latest',
          apiVersions: ['--exec'],
        },
      }),
    ).toEqual([
      'spec.source.helm.valueFiles[0]: must be a file in the repository: remote (URL) files are not supported',
      'spec.source.helm.valueFiles[1]: must resolve inside the repository (it climbs above the root with "..")',
      'spec.source.helm.fileParameters[0].path: must be a file in the repository: remote (URL) files are not supported',
      'spec.source.helm.parameters[1].name: must be a Helm value path such as image.tag or list[0].name (no "=", "," or spaces)',
      'spec.source.helm.version: only "v3" is supported (as Argo CD 2.x+ supports)',
      'spec.source.helm.kubeVersion: must be a Kubernetes version such as 1.31.0',
      'spec.source.helm.apiVersions[0]: must be an API version such as apps/v1 or apps/v1/Deployment',
    ]);
  });

  it('bounds sizes', () => {
    const big = 'x'.repeat(512 * 1024 + 1);
    expect(issues({ helm: { values: big } })).toEqual([
      'spec.source.helm.values: must be at most 524288 characters',
    ]);
    expect(issues({ helm: { valuesObject: { big } } })).toEqual([
      'spec.source.helm.valuesObject: must be at most 524288 bytes as JSON',
    ]);
  });

  it("checks kustomize's fields", () => {
    expect(
      issues({
        kustomize: {
          namePrefix: 'prod-',
          nameSuffix: '-v1',
          images: ['nginx:1.27', 'app=registry.example.com/app@sha256:abc'],
          commonLabels: { 'app.kubernetes.io/part-of': 'shop' },
          commonAnnotations: { note: 'hello world' },
          namespace: 'team-a',
          replicas: [
            { name: 'web', count: 3 },
            { name: 'api', count: '2' },
          ],
          patches: [{ patch: '- op: add', target: { kind: 'Deployment' } }, { path: 'patch.yaml' }],
          components: ['../components/monitoring'],
          forceCommonLabels: true,
          labelWithoutSelector: true,
          version: 'v5.4.3',
        },
      }),
    ).toEqual([]);
    expect(
      issues({
        kustomize: {
          namePrefix: 'a b',
          images: ['-x'],
          commonLabels: { 'bad key!': 'v', ok: 'a,b' },
          replicas: [{ name: 'web', count: -1 }],
          patches: [{}, { path: '../../../../x' }],
          components: ['https://github.com/x/y'],
        },
      }),
    ).toEqual(['spec.source.kustomize.replicas[0].count: must be a whole number']);
    expect(
      issues({
        kustomize: {
          namePrefix: 'a b',
          images: ['-x'],
          commonLabels: { 'bad key!': 'v', ok: 'a,b' },
          patches: [{}, { path: '../../../../x' }],
          components: ['https://github.com/x/y'],
          commonAnnotationsEnvsubst: true,
        },
      }),
    ).toEqual([
      'spec.source.kustomize.namePrefix: may only hold letters, digits, ".", "_" and "-"',
      'spec.source.kustomize.images[0]: must be an image override such as nginx:1.27, nginx=registry/nginx:1.27 or nginx@sha256:…',
      'spec.source.kustomize.commonLabels.bad key!: must be a qualified name such as app.kubernetes.io/part-of',
      'spec.source.kustomize.commonLabels.ok: must not contain "," or line breaks',
      'spec.source.kustomize.patches[0]: needs a patch or a path',
      'spec.source.kustomize.patches[1].path: must resolve inside the repository (it climbs above the root with "..")',
      'spec.source.kustomize.components[0]: must be a file in the repository: remote (URL) files are not supported',
      'spec.source.kustomize.commonAnnotationsEnvsubst: not supported: Capstan has no build environment variables to substitute',
    ]);
  });

  it('checks directory options and refuses two tools on one source', () => {
    expect(
      issues({
        directory: {
          recurse: true,
          include: '{a,b}/*.yaml',
          jsonnet: {
            extVars: [{ name: 'env', value: 'prod' }],
            tlas: [{ name: '1x', value: '1', code: true }],
            libs: ['vendor'],
          },
        },
      }),
    ).toEqual(['spec.source.directory.jsonnet.tlas[0].name: must be an identifier']);
    expect(issues({ helm: {}, kustomize: {} })).toEqual([
      'spec.source: multiple application sources defined: helm,kustomize',
    ]);
  });

  it('resolves files relative to the source path, or to the root with "/"', () => {
    expect(sourceFileProblem('charts/web', 'values.yaml')).toEqual({ file: 'charts/web/values.yaml' });
    expect(sourceFileProblem('charts/web', '/env/prod.yaml')).toEqual({ file: 'env/prod.yaml' });
    expect(sourceFileProblem('charts/web', '../../x.yaml')).toEqual({ file: 'x.yaml' });
    expect(sourceFileProblem('charts/web', '../../../x.yaml').problem).toMatch(/inside the repository/);
    expect(sourceFileProblem('.', 'file:///etc/passwd').problem).toMatch(/URL/);
  });

  it("valuesObject wins over values (Argo CD's ValuesYAML)", () => {
    expect(helmValuesText({ values: 'a: 1', valuesObject: { a: 2 } })).toBe('{"a":2}');
    expect(helmValuesText({ values: 'a: 1' })).toBe('a: 1');
    expect(helmValuesText({})).toBe('');
  });
});
