import { describe, expect, it } from 'vitest';
import { Selection, hasIdentity } from './selective.js';
import type { KubeObject } from '../manifests/manifest-source.js';

const obj = (apiVersion: string, kind: string, name: string, namespace?: string, hook?: string) =>
  ({
    apiVersion,
    kind,
    metadata: {
      name,
      ...(namespace ? { namespace } : {}),
      ...(hook ? { annotations: { 'argocd.argoproj.io/hook': hook } } : {}),
    },
  }) as KubeObject;

describe("selective sync (Argo CD's SyncOperation.resources)", () => {
  it("matches group, kind and name exactly, and an empty namespace matches any (Argo's HasIdentity)", () => {
    const r = { group: 'apps', kind: 'Deployment', name: 'web', namespace: '' };
    expect(hasIdentity(r, { group: 'apps', kind: 'Deployment', name: 'web', namespace: 'a' })).toBe(true);
    expect(hasIdentity(r, { group: '', kind: 'Deployment', name: 'web', namespace: 'a' })).toBe(false);
    expect(hasIdentity(r, { group: 'apps', kind: 'Deployment', name: 'web2' })).toBe(false);
    const scoped = { ...r, namespace: 'a' };
    expect(hasIdentity(scoped, { group: 'apps', kind: 'Deployment', name: 'web', namespace: 'b' })).toBe(
      false,
    );
    // No wildcards here: the CLI expands `*` against the Application's resources before asking.
    expect(hasIdentity({ ...r, name: '*' }, { group: 'apps', kind: 'Deployment', name: 'web' })).toBe(false);
  });

  it('keeps only the named objects, and no hooks, in a selective sync', () => {
    const objects = [
      obj('v1', 'ConfigMap', 'config', 'a'),
      obj('apps/v1', 'Deployment', 'web', 'a'),
      obj('batch/v1', 'Job', 'migrate', 'a', 'PreSync'),
    ];
    const all = Selection.of(undefined);
    expect(all.selective).toBe(false);
    expect(all.objects(objects)).toHaveLength(3);
    const one = Selection.of([{ group: '', kind: 'ConfigMap', name: 'config', namespace: '' }]);
    expect(one.objects(objects).map((o) => o.metadata.name)).toEqual(['config']);
    const withHook = Selection.of([{ group: 'batch', kind: 'Job', name: 'migrate', namespace: 'a' }]);
    expect(withHook.objects(objects)).toEqual([]);
    expect(one.includesRef({ apiVersion: 'v1', kind: 'ConfigMap', name: 'config', namespace: 'a' })).toBe(
      true,
    );
    expect(one.includesRef({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'a' })).toBe(
      false,
    );
  });
});
