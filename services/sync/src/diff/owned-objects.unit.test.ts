import { describe, expect, it } from 'vitest';
import { childKindsOf, imagesOf, nodeOf, ownedBy } from './owned-objects.js';

const deploy = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'a', uid: 'd1' },
  spec: { template: { spec: { containers: [{ image: 'nginx:1' }, { image: 'nginx:1' }] } } },
};
const rs = (name: string, owner: string) => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name, namespace: 'a', uid: `u-${name}`, ownerReferences: [{ uid: owner }] },
});

describe('owned objects (ownerReferences, as the controllers set them)', () => {
  it('knows which kinds the built-in controllers make for a kind', () => {
    expect(childKindsOf('apps/v1', 'Deployment')).toEqual([{ apiVersion: 'apps/v1', kind: 'ReplicaSet' }]);
    expect(childKindsOf('apps/v1', 'ReplicaSet')).toEqual([{ apiVersion: 'v1', kind: 'Pod' }]);
    expect(childKindsOf('v1', 'ConfigMap')).toEqual([]);
    // Group matters: a CRD called Deployment in another group owns nothing known.
    expect(childKindsOf('example.com/v1', 'Deployment')).toEqual([]);
  });

  it('keeps only the objects a listed parent owns, by uid, with their parents as refs', () => {
    const owned = ownedBy([deploy], [rs('web-1', 'd1'), rs('other-1', 'd2')]);
    expect(owned.map((o) => o.object.metadata?.name)).toEqual(['web-1']);
    expect(owned[0]!.parents).toEqual([
      { group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'a', name: 'web', uid: 'd1' },
    ]);
  });

  it("makes Argo CD's ResourceNode with health and the template's images", () => {
    const node = nodeOf(deploy, [], { status: 'Healthy' });
    expect(node).toMatchObject({
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      name: 'web',
      uid: 'd1',
      parentRefs: [],
      images: ['nginx:1'],
      health: { status: 'Healthy', message: '' },
    });
    expect(imagesOf({ spec: { containers: [{ image: 'busybox' }] } })).toEqual(['busybox']);
  });
});
