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
