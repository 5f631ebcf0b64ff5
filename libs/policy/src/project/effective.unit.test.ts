import { describe, expect, it } from 'vitest';
import { IN_CLUSTER_URL, lookupOf, project } from '../test-support/fixtures.js';
import { effectiveRestrictions } from './effective.js';

const PLATFORM = project('platform', {
  sourceRepos: ['https://git.example.com/**', '!https://git.example.com/secrets'],
  destinations: [
    { server: IN_CLUSTER_URL, namespace: 'team-*' },
    { server: '*', namespace: '!kube-system' },
  ],
  clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
  namespaceResourceWhitelist: [
    { group: 'apps', kind: 'Deployment' },
    { group: '', kind: 'ConfigMap' },
  ],
  namespaceResourceBlacklist: [{ group: '', kind: 'ResourceQuota' }],
  destinationServiceAccounts: [
    { server: IN_CLUSTER_URL, namespace: 'team-*', defaultServiceAccount: 'deployer' },
  ],
});

function effective(spec: Record<string, unknown>) {
  const child = project('team-a', { parentProject: 'platform', ...spec });
  const r = effectiveRestrictions('team-a', lookupOf(child, PLATFORM));
  if (!r.ok) throw new Error(r.reason);
  return r.restrictions;
}

describe("a project's effective restrictions under its chain", () => {
  it("given a child within its parent, then its own allows and every link's denies, by project", () => {
    const r = effective({
      sourceRepos: ['https://git.example.com/team-a/apps.git'],
      destinations: [{ server: IN_CLUSTER_URL, namespace: 'team-a-*' }],
      destinationServiceAccounts: [
        { server: IN_CLUSTER_URL, namespace: 'team-a-prod', defaultServiceAccount: 'deployer' },
      ],
    });
    expect(r.chain).toEqual(['team-a', 'platform']);
    expect(r.sourceRepos).toEqual([
      { value: 'https://git.example.com/team-a/apps.git', project: 'team-a', deny: false },
      { value: '!https://git.example.com/secrets', project: 'platform', deny: true },
    ]);
    expect(r.destinations).toEqual([
      { value: `${IN_CLUSTER_URL} / team-a-*`, project: 'team-a', deny: false },
      { value: '* / !kube-system', project: 'platform', deny: true },
    ]);
    // No cluster-scoped whitelist of its own: none (every link must allow).
    expect(r.clusterResources).toEqual([]);
    // No namespaced whitelist of its own: the parent's, with the parent's blacklist.
    expect(r.everyNamespacedResource).toBe(false);
    expect(r.namespaceResources.map((e) => [e.value, e.project, e.deny])).toEqual([
      ['apps/Deployment', 'platform', false],
      ['core/ConfigMap', 'platform', false],
      ['core/ResourceQuota', 'platform', true],
    ]);
    expect(r.destinationServiceAccounts).toEqual([
      { value: `${IN_CLUSTER_URL} / team-a-prod → deployer`, project: 'team-a', deny: false },
      { value: `${IN_CLUSTER_URL} / team-* → deployer`, project: 'platform', deny: false },
    ]);
  });

  it('given a child wider than its parent (the parent narrowed since), then the entry says who bounds it', () => {
    const r = effective({
      sourceRepos: ['*'],
      destinations: [{ server: IN_CLUSTER_URL, namespace: 'kube-system' }],
      destinationServiceAccounts: [
        { server: IN_CLUSTER_URL, namespace: 'team-a-prod', defaultServiceAccount: 'admin' },
      ],
    });
    expect(r.sourceRepos[0]!.boundedBy).toMatch(/not allowed by ancestor project "platform"/);
    expect(r.destinations[0]!.boundedBy).toMatch(/not within any of its spec.destinations/);
    expect(r.destinationServiceAccounts[0]!.boundedBy).toMatch(/never change the ServiceAccount/);
    expect(r.destinationServiceAccounts[1]!.boundedBy).toBeUndefined();
  });

  it('given no namespaced whitelist anywhere, then every namespaced kind; a broken chain is a reason', () => {
    const root = project('root', { sourceRepos: ['*'] });
    const ok = effectiveRestrictions('root', lookupOf(root));
    expect(ok.ok && ok.restrictions.everyNamespacedResource).toBe(true);
    const orphan = project('orphan', { parentProject: 'gone' });
    expect(effectiveRestrictions('orphan', lookupOf(orphan))).toEqual({
      ok: false,
      reason: 'project "orphan" names parentProject "gone", which does not exist',
    });
  });
});
