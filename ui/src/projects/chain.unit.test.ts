import { describe, expect, it } from 'vitest';
import { readChain, MAX_CHAIN, type Project } from './chain';

const project = (name: string, parentProject?: string): Project => ({
  metadata: { name },
  spec: parentProject ? { parentProject } : {},
});

describe('project parent chain', () => {
  it('follows parentProject to the root, nearest first', async () => {
    const all: Record<string, Project> = {
      dev: project('dev', 'team-a'),
      'team-a': project('team-a', 'platform'),
      platform: project('platform'),
    };
    const chain = await readChain('dev', async (n) => all[n]!);
    expect(chain.map((l) => l.name)).toEqual(['dev', 'team-a', 'platform']);
  });

  it('ends at a link the caller may not read, saying why', async () => {
    const chain = await readChain('dev', async (n) => {
      if (n === 'dev') return project('dev', 'platform');
      throw new Error('permission denied: projects, get, platform');
    });
    expect(chain.map((l) => [l.name, l.error?.message])).toEqual([
      ['dev', undefined],
      ['platform', 'permission denied: projects, get, platform'],
    ]);
  });

  it('stops on a cycle and at the bound', async () => {
    expect((await readChain('a', async (n) => project(n, n === 'a' ? 'b' : 'a'))).map((l) => l.name)).toEqual(
      ['a', 'b'],
    );
    const deep = await readChain('p0', async (n) => project(n, `p${Number(n.slice(1)) + 1}`));
    expect(deep).toHaveLength(MAX_CHAIN);
  });
});
