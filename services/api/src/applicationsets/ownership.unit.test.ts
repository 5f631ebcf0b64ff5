// Ownership of generated Applications: Argo CD's controller reference and its take-over error.
import { describe, expect, it } from 'vitest';
import type { Application } from '@capstan/policy';
import { isOwnedBy, keepOwnership, parseSetRef, takeOverRefusal, withSetOwner } from './ownership.js';

const app = (metadata: Record<string, unknown> = {}): Application =>
  ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'web', namespace: 'argocd', ...metadata },
    spec: { project: 'team-a', destination: {} },
  }) as Application;

const set = { namespace: 'argocd', name: 'addons' };

describe('ownership', () => {
  it("stamps Argo CD's controller reference and recognises it", () => {
    const owned = withSetOwner(app(), set);
    expect(owned.metadata).toMatchObject({
      ownerReferences: [
        {
          apiVersion: 'argoproj.io/v1alpha1',
          kind: 'ApplicationSet',
          name: 'addons',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(isOwnedBy(owned, set)).toBe(true);
    expect(isOwnedBy(owned, { namespace: 'argocd', name: 'other' })).toBe(false);
    expect(isOwnedBy(owned, { namespace: 'tenants', name: 'addons' })).toBe(false);
  });

  it("refuses a take-over with Argo CD's error, and names no owner when there is none", () => {
    const other = withSetOwner(app(), { namespace: 'argocd', name: 'other' });
    expect(takeOverRefusal(other, set)).toBe(
      'Object argocd/web is already owned by another ApplicationSet controller other',
    );
    expect(takeOverRefusal(app(), set)).toBe(
      'Object argocd/web already exists and is not owned by ApplicationSet addons',
    );
  });

  it("keeps the stored owner when a user's manifest says nothing of it", () => {
    const stored = withSetOwner(app(), set);
    expect(isOwnedBy(keepOwnership(app(), stored), set)).toBe(true);
    expect(keepOwnership(app(), undefined)).toEqual(app());
  });

  it('reads <namespace>/<name> with Kubernetes name rules', () => {
    expect(parseSetRef('argocd/addons')).toEqual(set);
    expect(() => parseSetRef('addons')).toThrow(/namespace/);
    expect(() => parseSetRef('argocd/Addons_')).toThrow();
  });
});
