import { describe, expect, it } from 'vitest';
import { ApplicationSchema } from '@capstan/policy';
import { sourceOptionsMessage } from './source-message.js';

const app = (source: Record<string, unknown>) =>
  ApplicationSchema.parse({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'web' },
    spec: {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: 'team-a' },
      source: { repoURL: 'https://git.example.com/apps.git', path: 'x', ...source },
    },
  });

describe('the GenerateManifests options of a source', () => {
  it("carries Argo CD's helm fields; namespace defaults to the destination's", () => {
    const a = app({
      helm: {
        valueFiles: ['v.yaml'],
        values: 'a: 1',
        valuesObject: { b: 2 },
        parameters: [{ name: 'p', value: '1', forceString: true }, { name: 'q' }],
        fileParameters: [{ name: 'f', path: 'f.txt' }],
        skipCrds: true,
        kubeVersion: '1.30.0',
        apiVersions: ['x/v1'],
      },
    });
    const m = sourceOptionsMessage(a, a.spec.source!);
    expect(m.helm).toMatchObject({
      releaseName: '',
      namespace: 'team-a',
      valueFiles: ['v.yaml'],
      values: 'a: 1',
      valuesObjectJson: '{"b":2}',
      parameters: [
        { name: 'p', value: '1', forceString: true },
        { name: 'q', value: '', forceString: false },
      ],
      fileParameters: [{ name: 'f', path: 'f.txt' }],
      skipCrds: true,
      kubeVersion: '1.30.0',
      apiVersions: ['x/v1'],
    });
    expect(m.kustomize).toBeUndefined();
    const named = app({ helm: { releaseName: 'r', namespace: 'other' } });
    expect(sourceOptionsMessage(named, named.spec.source!).helm).toMatchObject({
      releaseName: 'r',
      namespace: 'other',
    });
  });

  it('carries kustomize and directory options', () => {
    const k = app({
      kustomize: {
        namePrefix: 'p-',
        images: ['nginx:1'],
        commonLabels: { a: 'b' },
        replicas: [{ name: 'web', count: '2' }],
        patches: [{ patch: 'x', target: { kind: 'Deployment' }, options: { allowNameChange: true } }],
        components: ['../c'],
      },
    });
    expect(sourceOptionsMessage(k, k.spec.source!).kustomize).toMatchObject({
      namePrefix: 'p-',
      images: ['nginx:1'],
      commonLabels: { a: 'b' },
      replicas: [{ name: 'web', count: 2 }],
      patches: [
        {
          patch: 'x',
          path: '',
          target: { kind: 'Deployment', group: '' },
          options: { allowNameChange: true },
        },
      ],
      components: ['../c'],
    });
    const d = app({
      directory: {
        recurse: true,
        jsonnet: { extVars: [{ name: 'e', value: 'v', code: true }], libs: ['lib'] },
      },
    });
    expect(sourceOptionsMessage(d, d.spec.source!).directory).toEqual({
      recurse: true,
      include: '',
      exclude: '',
      jsonnet: { extVars: [{ name: 'e', value: 'v', code: true }], tlas: [], libs: ['lib'] },
    });
  });
});
