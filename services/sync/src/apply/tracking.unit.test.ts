import { describe, expect, it } from 'vitest';
import {
  ownershipOf,
  parseTrackingId,
  sharedResourceMessage,
  trackingContext,
  trackingId,
  withTracking,
} from './tracking.js';

const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'my-deployment' };
const live = (id: string | undefined) => ({
  metadata: { name: 'x', annotations: id ? { 'argocd.argoproj.io/tracking-id': id } : {} },
});

describe('resource tracking (Argo CD annotation format)', () => {
  it("given an Application in the control namespace, when an object is tracked, then the id is Argo's documented example", () => {
    const ctx = trackingContext({ namespace: 'argocd', name: 'my-app' }, 'argocd', 'default');
    // docs/user-guide/resource_tracking.md: my-app:apps/Deployment:default/my-deployment
    expect(trackingId(ctx, deployment)).toBe('my-app:apps/Deployment:default/my-deployment');
    expect(trackingId(ctx, { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'web', name: 'c' })).toBe(
      'my-app:/ConfigMap:web/c',
    );
    // A cluster-scoped object gets the destination namespace, as UnstructuredToAppInstanceValue does.
    expect(trackingId(ctx, { apiVersion: 'v1', kind: 'Namespace', name: 'web' })).toBe(
      'my-app:/Namespace:default/web',
    );
  });

  it('given an Application outside the control namespace, when tracked, then its instance name is <namespace>_<name>', () => {
    const ctx = trackingContext({ namespace: 'team-a', name: 'web' }, 'argocd', 'team-a');
    expect(trackingId(ctx, deployment)).toBe('team-a_web:apps/Deployment:default/my-deployment');
    expect(sharedResourceMessage(ctx, deployment, 'other')).toBe(
      'Deployment/my-deployment is part of applications team-a/web and other',
    );
  });

  it('given live tracking ids, when ownership is asked, then only an id naming this application and this object is ownership', () => {
    const ctx = trackingContext({ namespace: 'argocd', name: 'a' }, 'argocd', 'default');
    expect(ownershipOf(live('a:apps/Deployment:default/my-deployment'), ctx, deployment)).toEqual({
      kind: 'owned',
    });
    expect(ownershipOf(live('b:apps/Deployment:default/my-deployment'), ctx, deployment)).toEqual({
      kind: 'other',
      instance: 'b',
    });
    // Copied from another object, malformed or absent: not this Application's.
    expect(ownershipOf(live('a:apps/Deployment:default/other'), ctx, deployment)).toEqual({
      kind: 'untracked',
    });
    expect(ownershipOf(live('a-garbage'), ctx, deployment)).toEqual({ kind: 'untracked' });
    expect(ownershipOf(live(undefined), ctx, deployment)).toEqual({ kind: 'untracked' });
    expect(parseTrackingId('app:/ConfigMap:ns/name')).toEqual({
      instance: 'app',
      group: '',
      kind: 'ConfigMap',
      namespace: 'ns',
      name: 'name',
    });
  });

  it('given an object with annotations, when tracked, then its own annotations are kept', () => {
    const ctx = trackingContext({ namespace: 'argocd', name: 'a' }, 'argocd', 'default');
    const o = withTracking(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c', namespace: 'n', annotations: { keep: 'me' } },
      },
      ctx,
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'n', name: 'c' },
    );
    expect(o.metadata.annotations).toEqual({
      keep: 'me',
      'argocd.argoproj.io/tracking-id': 'a:/ConfigMap:n/c',
    });
  });
});
