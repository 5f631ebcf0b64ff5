import { describe, expect, it } from 'vitest';
import { treeOf, NODE_WIDTH } from './graph-layout';

describe('resource tree layout', () => {
  it('links the Application to each resource, laid out left to right without overlap', () => {
    const { nodes, edges } = treeOf({
      metadata: { name: 'guestbook', namespace: 'argocd' },
      spec: {},
      status: {
        sync: { status: 'Synced' },
        health: { status: 'Healthy' },
        resources: [
          {
            kind: 'Service',
            name: 'guestbook-ui',
            namespace: 'team-a',
            status: 'Synced',
            health: { status: 'Healthy' },
          },
          {
            group: 'apps',
            kind: 'Deployment',
            name: 'guestbook-ui',
            namespace: 'team-a',
            status: 'OutOfSync',
          },
        ],
      },
    });
    expect(nodes.map((n) => n.kind)).toEqual(['Application', 'Service', 'Deployment']);
    expect(edges.map((e) => e.target)).toEqual([
      '/Service/team-a/guestbook-ui',
      'apps/Deployment/team-a/guestbook-ui',
    ]);
    const [root, a, b] = nodes;
    expect(a!.x).toBeGreaterThanOrEqual(root!.x + NODE_WIDTH);
    expect(a!.x).toBe(b!.x);
    expect(a!.y).not.toBe(b!.y);
    expect(nodes[2]!.sync).toBe('OutOfSync');
    expect(nodes[1]!.health).toBe('Healthy');
  });
});

describe('resource tree with owned objects', () => {
  it("draws a Deployment's ReplicaSet and its Pod under it, with their health", () => {
    const app = {
      metadata: { name: 'guestbook', namespace: 'argocd' },
      spec: {},
      status: {
        resources: [{ group: 'apps', kind: 'Deployment', name: 'web', namespace: 'a', status: 'Synced' }],
      },
    };
    const deploy = {
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      namespace: 'a',
      name: 'web',
      uid: 'd1',
    };
    const rs = {
      group: 'apps',
      version: 'v1',
      kind: 'ReplicaSet',
      namespace: 'a',
      name: 'web-5d9',
      uid: 'r1',
    };
    const { nodes, edges } = treeOf(app, {
      nodes: [
        // The Pod first: the order of the answer does not matter.
        {
          kind: 'Pod',
          version: 'v1',
          namespace: 'a',
          name: 'web-5d9-x1',
          uid: 'p1',
          parentRefs: [rs],
          health: { status: 'Healthy' },
        },
        { ...deploy, health: { status: 'Healthy' } },
        { ...rs, parentRefs: [deploy], health: { status: 'Progressing' } },
        // Owned by something not drawn: left out.
        { kind: 'Pod', namespace: 'a', name: 'stray', parentRefs: [{ kind: 'ReplicaSet', name: 'x' }] },
      ],
    });
    expect(nodes.map((n) => `${n.kind} ${n.name}`)).toEqual([
      'Application guestbook',
      'Deployment web',
      'ReplicaSet web-5d9',
      'Pod web-5d9-x1',
    ]);
    expect(edges.map((e) => e.id)).toEqual([
      'app/guestbook->apps/Deployment/a/web',
      'apps/Deployment/a/web->apps/ReplicaSet/a/web-5d9',
      'apps/ReplicaSet/a/web-5d9->/Pod/a/web-5d9-x1',
    ]);
    const [, d, r, p] = nodes;
    expect(d!.resource?.uid).toBe('d1');
    expect(r!.health).toBe('Progressing');
    expect(r!.resource?.owned).toBe(true);
    expect(p!.x).toBeGreaterThan(r!.x);
    expect(r!.x).toBeGreaterThan(d!.x);
  });
});
