import { describe, expect, it } from 'vitest';
import { sharedCheckouts } from './shared-checkouts.js';

const URL = 'https://git.example.com/shared/apps.git';

describe('which projects share a checkout (same credential resolved)', () => {
  it('puts projects without their own credential on the unscoped one, together', () => {
    const creds = [
      { repo: URL, project: '' },
      { repo: URL, project: 'team-b' },
      { repo: 'https://git.example.com/other.git', project: 'team-a' },
    ];
    const uses = [
      { project: 'team-a', url: URL },
      { project: 'team-c', url: `${URL.replace('.git', '')}` },
      { project: 'team-b', url: URL },
      { project: 'team-a', url: 'https://git.example.com/other.git' },
      { project: 'team-d', url: 'https://git.example.com/unknown.git' },
    ];
    expect(sharedCheckouts(creds, uses)).toEqual([['team-a', 'team-c'], ['team-b'], ['team-a']]);
  });

  it('names no project for a credential no Application uses', () => {
    expect(sharedCheckouts([{ repo: URL, project: 'team-a' }], [{ project: 'team-b', url: URL }])).toEqual([
      [],
    ]);
  });
});
