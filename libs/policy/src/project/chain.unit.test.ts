import { describe, expect, it } from 'vitest';
import { chainOf, IN_CLUSTER_URL, lookupOf, project } from '../test-support/fixtures.js';
import { ProjectChain } from './chain.js';

describe('resolving the parentProject chain', () => {
  it('given a child, a parent and a root, when resolving, then the chain runs from the project to the root', () => {
    const chain = chainOf(
      'leaf',
      project('leaf', { parentProject: 'mid' }),
      project('mid', { parentProject: 'root' }),
      project('root'),
    );
    expect(chain.names).toEqual(['leaf', 'mid', 'root']);
  });

  it('given a missing project, when resolving, then it is an error that names it', () => {
    const r = ProjectChain.resolve('ghost', lookupOf());
    expect(r).toMatchObject({ ok: false, code: 'project-not-found' });
    expect(!r.ok && r.reason).toBe('project "ghost" not found');
  });

  it('given a missing parent, when resolving, then it is an error that names child and parent', () => {
    const r = ProjectChain.resolve('team-a', lookupOf(project('team-a', { parentProject: 'tenants' })));
    expect(r).toMatchObject({ ok: false, code: 'parent-not-found', path: ['team-a', 'tenants'] });
    expect(!r.ok && r.reason).toContain('"team-a" names parentProject "tenants", which does not exist');
  });

  it('given a cycle, when resolving, then it is an error that shows the cycle', () => {
    const r = ProjectChain.resolve(
      'a',
      lookupOf(
        project('a', { parentProject: 'b' }),
        project('b', { parentProject: 'c' }),
        project('c', { parentProject: 'a' }),
      ),
    );
    expect(r).toMatchObject({ ok: false, code: 'cycle' });
    expect(!r.ok && r.reason).toBe('project chain has a cycle: a -> b -> c -> a');
  });

  it('given a project that is its own parent, when resolving, then it is invalid', () => {
    const r = ProjectChain.resolve('a', lookupOf(project('a', { parentProject: 'a' })));
    expect(r).toMatchObject({ ok: false, code: 'invalid-project' });
    expect(!r.ok && r.reason).toContain('spec.parentProject: a project cannot be its own parent');
  });

  it('given an invalid parent, when resolving the child, then the chain is refused naming the parent and the field', () => {
    const r = ProjectChain.resolve(
      'child',
      lookupOf(
        project('child', { parentProject: 'bad' }),
        project('bad', {
          destinationServiceAccounts: [{ server: '*', namespace: '[', defaultServiceAccount: 'x' }],
        }),
      ),
    );
    expect(r).toMatchObject({ ok: false, code: 'invalid-project' });
    expect(!r.ok && r.reason).toContain(
      'project "bad" is invalid: spec.destinationServiceAccounts[0].namespace: invalid glob "["',
    );
  });
});

describe('sourceRepos along the chain (Argo CD semantics, "!" negation)', () => {
  const tenants = project('tenants', {
    sourceRepos: ['https://git.example.com/*/**', '!https://git.example.com/secret/**'],
  });
  const teamA = project('team-a', {
    parentProject: 'tenants',
    sourceRepos: ['https://git.example.com/team-a/*', '!https://git.example.com/team-a/private'],
  });
  const chain = chainOf('team-a', teamA, tenants);

  it.each([
    ['https://git.example.com/team-a/apps.git', true, undefined],
    ['https://GIT.example.com/team-a/Apps', true, undefined],
    ['https://git.example.com/team-a/private.git', false, 'team-a'],
    ['https://git.example.com/team-a/nested/apps', false, 'team-a'],
    ['https://git.example.com/team-b/apps', false, 'team-a'],
    ['https://other.example.com/team-a/apps', false, 'team-a'],
  ] as const)('given %s, when checking, then allowed=%s (denied by %s)', (url, allowed, deniedBy) => {
    const c = chain.permitsSource(url);
    expect(c.allowed).toBe(allowed);
    expect(c.deniedBy).toBe(deniedBy);
  });

  it('given a child that allows what its parent denies, when checking, then the parent denies', () => {
    const loose = project('loose', { parentProject: 'tenants', sourceRepos: ['*'] });
    const c = chainOf('loose', loose, tenants).permitsSource('https://git.example.com/secret/keys');
    expect(c).toMatchObject({ allowed: false, deniedBy: 'tenants' });
    expect(c.reason).toContain('parent project "tenants"');
  });

  it('given only a deny entry, when checking, then nothing is permitted (an allow entry must match; Argo CD documents this rule)', () => {
    const only = chainOf('p', project('p', { sourceRepos: ['!https://git.example.com/secret'] }));
    expect(only.permitsSource('https://git.example.com/anything').allowed).toBe(false);
    const withAll = chainOf('p', project('p', { sourceRepos: ['!https://git.example.com/secret', '*'] }));
    expect(withAll.permitsSource('https://git.example.com/anything').allowed).toBe(true);
    expect(withAll.permitsSource('https://git.example.com/secret.git').allowed).toBe(false);
  });

  it('given no sourceRepos, when checking, then nothing is permitted', () => {
    expect(chainOf('p', project('p')).permitsSource('https://git.example.com/x').allowed).toBe(false);
  });

  it('given scp-style and ssh:// URLs, when checking, then they are the same repository', () => {
    const ssh = chainOf('p', project('p', { sourceRepos: ['git@github.com:org/*'] }));
    expect(ssh.permitsSource('ssh://git@github.com/org/repo.git').allowed).toBe(true);
  });
});

describe('destinations along the chain', () => {
  const root = project('no-kube-system', {
    destinations: [
      { server: '*', namespace: '!kube-system' },
      { server: '*', namespace: '*' },
    ],
  });
  const team = project('team-a', {
    parentProject: 'no-kube-system',
    destinations: [
      { name: 'in-cluster', namespace: 'team-a-*' },
      { server: 'https://prod.example.com', namespace: '*' },
    ],
  });
  const chain = chainOf('team-a', team, root);

  it.each([
    [{ server: IN_CLUSTER_URL, name: 'in-cluster', namespace: 'team-a-dev' }, true, undefined],
    [{ server: IN_CLUSTER_URL, name: 'in-cluster', namespace: 'team-b-dev' }, false, 'team-a'],
    [{ server: 'https://prod.example.com', name: 'prod', namespace: 'anything' }, true, undefined],
    [{ server: 'https://prod.example.com', name: 'prod', namespace: 'kube-system' }, false, 'no-kube-system'],
  ] as const)('given %j, when checking, then allowed=%s (denied by %s)', (dest, allowed, deniedBy) => {
    const c = chain.permitsDestination(dest);
    expect(c.allowed).toBe(allowed);
    expect(c.deniedBy).toBe(deniedBy);
  });
});

describe('resource white- and blacklists along the chain (proposal 001: no cluster resources)', () => {
  const noClusterResources = project('no-cluster-resources', {
    sourceRepos: ['*'],
    clusterResourceWhitelist: [],
  });
  const child = project('dev-project', {
    parentProject: 'no-cluster-resources',
    clusterResourceWhitelist: [{ group: '*', kind: '*' }],
    namespaceResourceBlacklist: [{ group: '', kind: 'ResourceQuota' }],
  });
  const chain = chainOf('dev-project', child, noClusterResources);

  it('given a cluster-scoped kind the child whitelists, when checking, then the parent denies it', () => {
    expect(
      chain.permitsResource({ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' }, false),
    ).toMatchObject({ allowed: false, deniedBy: 'no-cluster-resources' });
  });
  it('given a namespaced kind, when checking, then an absent whitelist allows and the blacklist denies', () => {
    expect(chain.permitsResource({ group: 'apps', kind: 'Deployment' }, true).allowed).toBe(true);
    expect(chain.permitsResource({ group: '', kind: 'ResourceQuota' }, true)).toMatchObject({
      allowed: false,
      deniedBy: 'dev-project',
    });
  });
  it('given an empty namespaceResourceWhitelist, when checking, then no namespaced kind is allowed (as in Argo CD)', () => {
    expect(
      chainOf('p', project('p', { namespaceResourceWhitelist: [] })).permitsResource(
        { group: '', kind: 'ConfigMap' },
        true,
      ).allowed,
    ).toBe(false);
  });
  it('given a whitelist with globs, when checking, then group and kind globs apply', () => {
    const p = chainOf(
      'p',
      project('p', { clusterResourceWhitelist: [{ group: '*.k8s.io', kind: 'Cluster*' }] }),
    );
    expect(
      p.permitsResource({ group: 'rbac.authorization.k8s.io', kind: 'ClusterRoleBinding' }, false).allowed,
    ).toBe(true);
    expect(p.permitsResource({ group: '', kind: 'Namespace' }, false).allowed).toBe(false);
  });
});

describe('Applications outside the control-plane namespace', () => {
  it('given sourceNamespaces on every project, when checking, then each must allow the namespace', () => {
    const root = project('root', { sourceNamespaces: ['team-*'] });
    const child = project('child', { parentProject: 'root', sourceNamespaces: ['team-a'] });
    const chain = chainOf('child', child, root);
    expect(chain.permitsApplicationNamespace('argocd', 'argocd').allowed).toBe(true);
    expect(chain.permitsApplicationNamespace('team-a', 'argocd').allowed).toBe(true);
    expect(chain.permitsApplicationNamespace('team-b', 'argocd')).toMatchObject({
      allowed: false,
      deniedBy: 'child',
    });
  });
});
