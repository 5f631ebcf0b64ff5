import { describe, expect, it } from 'vitest';
import { IN_CLUSTER_URL, lookupOf, project } from '../test-support/fixtures.js';
import { projectBoundIssues } from './bounds.js';

const DEV_ONLY = project('dev-namespaces-only', {
  sourceRepos: ['https://git.example.com/dev/*', '!https://git.example.com/dev/secrets'],
  destinations: [
    { server: IN_CLUSTER_URL, namespace: 'dev-*' },
    { name: 'staging', namespace: 'dev-*' },
    { server: '*', namespace: '!dev-admin' },
  ],
  namespaceResourceBlacklist: [{ group: '', kind: 'ResourceQuota' }],
  clusterResourceWhitelist: [{ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' }],
  destinationServiceAccounts: [
    { server: IN_CLUSTER_URL, namespace: 'dev-*', defaultServiceAccount: 'deployer' },
  ],
  sourceNamespaces: ['dev-apps-*'],
});
const NO_CLUSTER = project('no-cluster-resources', { sourceRepos: ['*'], clusterResourceWhitelist: [] });
const CLUSTERS = [{ name: 'staging', server: 'https://staging.example.com' }];

function issues(spec: Record<string, unknown>, parent = 'dev-namespaces-only') {
  const child = project('team-x', { parentProject: parent, ...spec });
  return projectBoundIssues(child, lookupOf(DEV_ONLY, NO_CLUSTER), CLUSTERS);
}

describe('the bound check of a child project', () => {
  it('given a child within its parent in every field, then there is no issue', () => {
    expect(
      issues({
        sourceRepos: ['https://git.example.com/dev/app-*', '!https://git.example.com/dev/secrets'],
        destinations: [
          { server: IN_CLUSTER_URL, namespace: 'dev-team-x' },
          { server: 'https://staging.example.com', namespace: 'dev-x-*' },
          { name: 'in-cluster', namespace: 'dev-a' },
        ],
        namespaceResourceWhitelist: [{ group: 'apps', kind: 'Deployment' }],
        clusterResourceWhitelist: [{ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'x-*' }],
        destinationServiceAccounts: [
          { server: IN_CLUSTER_URL, namespace: 'dev-team-x', defaultServiceAccount: 'deployer' },
        ],
        sourceNamespaces: ['dev-apps-x'],
      }),
    ).toEqual([]);
  });

  it('given no parent, then nothing is checked', () => {
    expect(projectBoundIssues(project('root', { sourceRepos: ['*'] }), lookupOf())).toEqual([]);
  });

  it('given a missing parent or a cycle through the child, then one issue on spec.parentProject', () => {
    expect(issues({}, 'ghost')).toEqual([
      { path: 'spec.parentProject', message: 'project "ghost" not found' },
    ]);
    const loop = project('a', { parentProject: 'team-x' });
    const child = project('team-x', { parentProject: 'a' });
    expect(projectBoundIssues(child, lookupOf(loop, project('team-x')))).toEqual([
      { path: 'spec.parentProject', message: 'project chain has a cycle: a -> team-x -> a' },
    ]);
  });

  it('given a wider source repository, then the issue names the field, the value and the ancestor', () => {
    expect(issues({ sourceRepos: ['https://git.example.com/*'] })).toEqual([
      {
        path: 'spec.sourceRepos[0]',
        message:
          'source repository "https://git.example.com/*" is not allowed by ancestor project "dev-namespaces-only": it is not within any of its spec.sourceRepos',
      },
    ]);
  });

  it("given a pattern the parent's deny may hit, then the child must restate the deny", () => {
    const [issue] = issues({ sourceRepos: ['https://git.example.com/dev/*'] });
    expect(issue?.path).toBe('spec.sourceRepos[0]');
    expect(issue?.message).toContain('denies "!https://git.example.com/dev/secrets"');
    // a literal the deny does not match needs nothing
    expect(issues({ sourceRepos: ['https://git.example.com/dev/app'] })).toEqual([]);
  });

  it('given a wider destination, by server or by cluster name, then it is refused', () => {
    expect(issues({ destinations: [{ server: IN_CLUSTER_URL, namespace: 'prod' }] })).toEqual([
      {
        path: 'spec.destinations[0]',
        message: `destination server "${IN_CLUSTER_URL}", namespace "prod" is not allowed by ancestor project "dev-namespaces-only": it is not within any of its spec.destinations`,
      },
    ]);
    expect(issues({ destinations: [{ name: 'staging', namespace: '*' }] })[0]?.path).toBe(
      'spec.destinations[0]',
    );
    // a cluster the parent names by name, the child by server (and the other way round)
    expect(issues({ destinations: [{ server: 'https://staging.example.com', namespace: 'dev-a' }] })).toEqual(
      [],
    );
    expect(
      issues({ destinations: [{ server: 'https://other.example.com', namespace: 'dev-a' }] }),
    ).toHaveLength(1);
  });

  it("given a destination the parent's deny entry may reject, then the child must restate it", () => {
    const [issue] = issues({ destinations: [{ server: IN_CLUSTER_URL, namespace: 'dev-*' }] });
    expect(issue?.message).toContain('spec.destinations[2]');
    expect(
      issues({
        destinations: [
          { server: IN_CLUSTER_URL, namespace: 'dev-*' },
          { server: '*', namespace: '!dev-admin' },
        ],
      }),
    ).toEqual([]);
  });

  it('given a cluster-scoped kind under a parent without cluster resources, then it is refused', () => {
    expect(
      issues(
        { sourceRepos: ['*'], clusterResourceWhitelist: [{ group: '*', kind: '*' }] },
        'no-cluster-resources',
      ),
    ).toEqual([
      {
        path: 'spec.clusterResourceWhitelist[0]',
        message:
          'cluster-scoped resource */* is not allowed by ancestor project "no-cluster-resources": its spec.clusterResourceWhitelist is empty or absent: it allows no cluster-scoped resources',
      },
    ]);
  });

  it('given kinds outside the whitelist or hit by the blacklist, then they are refused', () => {
    expect(issues({ clusterResourceWhitelist: [{ group: '*', kind: 'ClusterRole' }] })[0]?.message).toContain(
      'not within any of its spec.clusterResourceWhitelist',
    );
    expect(issues({ namespaceResourceWhitelist: [{ group: '', kind: '*' }] })[0]?.message).toContain(
      'spec.namespaceResourceBlacklist[0] (ResourceQuota) may exclude it',
    );
    expect(
      issues({
        namespaceResourceWhitelist: [{ group: '', kind: '*' }],
        namespaceResourceBlacklist: [{ group: '', kind: 'ResourceQuota' }],
      }),
    ).toEqual([]);
  });

  it('given a source namespace outside the parent, then it is refused', () => {
    expect(issues({ sourceNamespaces: ['*'] })).toEqual([
      {
        path: 'spec.sourceNamespaces[0]',
        message:
          'source namespace "*" is not allowed by ancestor project "dev-namespaces-only": it is not within any of its spec.sourceNamespaces',
      },
    ]);
  });

  it('given a destinationServiceAccounts entry that would change the identity, then it is refused', () => {
    expect(
      issues({
        destinationServiceAccounts: [
          { server: IN_CLUSTER_URL, namespace: 'dev-a', defaultServiceAccount: 'cluster-admin' },
        ],
      })[0]?.message,
    ).toContain('resolves "deployer" where this rule may apply');
    // nothing above declares prod: only the default ServiceAccount is what the chain would use
    expect(
      issues({
        destinationServiceAccounts: [
          { server: IN_CLUSTER_URL, namespace: 'prod', defaultServiceAccount: 'admin' },
        ],
      })[0]?.message,
    ).toContain('no ancestor has a destinationServiceAccounts rule for it');
    expect(
      issues({
        destinationServiceAccounts: [
          { server: IN_CLUSTER_URL, namespace: 'prod', defaultServiceAccount: 'default' },
        ],
      }),
    ).toEqual([]);
  });

  it('given a grandparent that excludes what the parent allows, then the grandparent is named', () => {
    const mid = project('mid', {
      parentProject: 'no-cluster-resources',
      sourceRepos: ['*'],
      clusterResourceWhitelist: [{ group: '*', kind: '*' }],
    });
    const child = project('team-x', {
      parentProject: 'mid',
      clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
    });
    const [issue] = projectBoundIssues(child, lookupOf(mid, NO_CLUSTER));
    expect(issue?.message).toContain('ancestor project "no-cluster-resources"');
  });
});
