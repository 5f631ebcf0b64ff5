import { describe, expect, it } from 'vitest';
import { CHAIN_NODE_HEIGHT, chainLayout } from './chain-layout';

describe('parent chain layout', () => {
  it('draws this project below its parent and the root on top, linked child to parent', () => {
    const { nodes, edges } = chainLayout([
      { name: 'dev', project: { metadata: { name: 'dev' }, spec: { parentProject: 'team-a' } } },
      { name: 'team-a', project: { metadata: { name: 'team-a' }, spec: { parentProject: 'platform' } } },
      { name: 'platform', error: new Error('permission denied') },
    ]);
    expect(nodes.map((n) => [n.id, n.current])).toEqual([
      ['dev', true],
      ['team-a', false],
      ['platform', false],
    ]);
    expect(edges.map((e) => [e.source, e.target])).toEqual([
      ['dev', 'team-a'],
      ['team-a', 'platform'],
    ]);
    const [dev, team, root] = nodes;
    expect(team!.y).toBeLessThanOrEqual(dev!.y - CHAIN_NODE_HEIGHT);
    expect(root!.y).toBeLessThanOrEqual(team!.y - CHAIN_NODE_HEIGHT);
  });
});
