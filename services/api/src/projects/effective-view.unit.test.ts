import { describe, expect, it } from 'vitest';
import type { EffectiveRestrictions } from '@capstan/policy';
import { WITHHELD_BOUND, withholdUnreadable } from './effective-view.js';

const restrictions: EffectiveRestrictions = {
  chain: ['team-a', 'tenants', 'platform'],
  sourceRepos: [
    {
      value: '*',
      project: 'team-a',
      deny: false,
      boundedBy: 'not allowed by ancestor project "platform": …',
    },
    { value: '!https://git/secrets', project: 'platform', deny: true },
  ],
  destinations: [],
  clusterResources: [],
  everyNamespacedResource: true,
  namespaceResources: [],
  destinationServiceAccounts: [
    { value: 'https://k / team-a-* → deployer', project: 'tenants', deny: false, boundedBy: 'by "platform"' },
  ],
};

describe('the effective restrictions as a caller may see them', () => {
  it('withholds the entries of a link the caller may not get, and the bound message of those under it', () => {
    const v = withholdUnreadable(restrictions, (p) => p !== 'platform');
    expect(v.sourceRepos).toEqual([
      { value: '*', project: 'team-a', deny: false, boundedBy: WITHHELD_BOUND, withheld: false },
      { value: '', project: 'platform', deny: true, boundedBy: '', withheld: true },
    ]);
    expect(v.destinationServiceAccounts[0]).toMatchObject({
      value: 'https://k / team-a-* → deployer',
      boundedBy: WITHHELD_BOUND,
    });
    expect(v.everyNamespacedResource).toBe(true);
  });

  it('shows everything to a caller who may get every link', () => {
    const v = withholdUnreadable(restrictions, () => true);
    expect(v.sourceRepos[0]!.boundedBy).toBe('not allowed by ancestor project "platform": …');
    expect(v.sourceRepos[1]).toMatchObject({ value: '!https://git/secrets', withheld: false });
  });
});
