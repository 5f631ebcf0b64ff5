import { describe, expect, it } from 'vitest';
import { application, IN_CLUSTER_URL, lookupOf, project } from '../test-support/fixtures.js';
import { explainSync } from './explain.js';
import type { ExplainSyncInput } from './decision.js';

const teamA = project('team-a', {
  sourceRepos: ['https://git.example.com/*'],
  destinations: [{ server: '*', namespace: 'team-a-*' }],
  destinationServiceAccounts: [
    { server: IN_CLUSTER_URL, namespace: 'team-a-prod', defaultServiceAccount: 'prod-deployer' },
    { server: '*', namespace: '*', defaultServiceAccount: 'team-a-system:deployer' },
  ],
});
const clusters = [{ name: 'remote', server: 'https://remote.example.com:6443' }];

function explain(overrides: Partial<ExplainSyncInput> & { destination?: Record<string, unknown> } = {}) {
  const { destination, ...rest } = overrides;
  return explainSync({
    application: application('guestbook', {
      project: 'team-a',
      destination: destination ?? { server: IN_CLUSTER_URL, namespace: 'team-a-prod' },
    }),
    projects: lookupOf(teamA),
    clusters,
    impersonation: true,
    strict: false,
    ...rest,
  });
}

describe('explainSync: the full decision', () => {
  it('given an allowed sync with impersonation, when explaining, then identity, rule, pattern and every rule considered are reported', () => {
    const d = explain();
    expect(d).toMatchObject({
      allowed: true,
      impersonation: true,
      identity: 'service-account',
      username: 'system:serviceaccount:team-a-prod:prod-deployer',
      serviceAccount: { namespace: 'team-a-prod', name: 'prod-deployer' },
      matchedRule: 0,
      matchedProject: 'team-a',
      matchedPattern: { server: IN_CLUSTER_URL, namespace: 'team-a-prod' },
      fallback: null,
      projectChain: ['team-a'],
      destination: {
        server: IN_CLUSTER_URL,
        name: 'in-cluster',
        namespace: 'team-a-prod',
        serviceAccountNamespace: 'team-a-prod',
      },
    });
    expect(d.rules).toEqual([
      expect.objectContaining({ index: 0, serverMatched: true, namespaceMatched: true, firstMatch: true }),
      expect.objectContaining({ index: 1, serverMatched: true, namespaceMatched: true, firstMatch: false }),
    ]);
    expect(d.reason).toContain('impersonating system:serviceaccount:team-a-prod:prod-deployer');
    expect(d.checks.every((c) => c.allowed)).toBe(true);
  });

  it('given a destination by cluster name, when explaining, then the rules see the cluster URL (so the catch-all matches, not the in-cluster rule)', () => {
    const d = explain({ destination: { name: 'remote', namespace: 'team-a-prod' } });
    expect(d).toMatchObject({
      allowed: true,
      matchedRule: 1,
      username: 'system:serviceaccount:team-a-system:deployer',
      destination: { server: 'https://remote.example.com:6443', name: 'remote' },
    });
  });

  it('given an unknown cluster name, when explaining, then it is refused', () => {
    const d = explain({ destination: { name: 'nowhere', namespace: 'team-a-prod' } });
    expect(d).toMatchObject({ allowed: false, username: null, serviceAccount: null });
    expect(d.reason).toBe('spec.destination.name: cluster "nowhere" is not registered');
  });

  it('given impersonation off, when explaining, then the control-plane identity is used and the ignored rules are warned about', () => {
    const d = explain({ impersonation: false });
    expect(d).toMatchObject({
      allowed: true,
      impersonation: false,
      identity: 'control-plane',
      username: null,
      serviceAccount: null,
      matchedRule: null,
      fallback: null,
    });
    expect(d.warnings).toEqual([
      'project "team-a" has 2 destinationServiceAccounts rule(s) that are ignored because impersonation is off (application.sync.impersonation.enabled)',
    ]);
  });

  it('given no matching rule, when explaining, then the fallback is named, and strict mode refuses', () => {
    const plain = project('team-a', { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] });
    const lenient = explain({ projects: lookupOf(plain) });
    expect(lenient).toMatchObject({
      allowed: true,
      fallback: 'default-service-account',
      matchedRule: null,
      username: 'system:serviceaccount:team-a-prod:default',
    });
    const strict = explain({ projects: lookupOf(plain), strict: true });
    expect(strict).toMatchObject({ allowed: false, strict: true, fallback: null, username: null });
    expect(strict.reason).toMatch(/strict mode refuses/);
  });

  it('given a destination the project does not permit, when explaining, then it is refused even though a ServiceAccount would match', () => {
    const d = explain({ destination: { server: IN_CLUSTER_URL, namespace: 'kube-system' } });
    expect(d).toMatchObject({ allowed: false, username: null, matchedRule: 1 });
    expect(d.reason).toContain(
      'destination server "https://kubernetes.default.svc" (cluster "in-cluster"), namespace "kube-system" is not permitted by project "team-a"',
    );
  });

  it('given a source repository the project does not permit, when explaining, then it is refused naming the repository', () => {
    const app = application('guestbook', {
      project: 'team-a',
      destination: { server: IN_CLUSTER_URL, namespace: 'team-a-prod' },
      source: { repoURL: 'https://evil.example.org/x.git' },
    });
    const d = explain({ application: app });
    expect(d.allowed).toBe(false);
    expect(d.reason).toContain(
      'source repository "https://evil.example.org/x.git" is not permitted by project "team-a"',
    );
  });

  it('given a project that does not exist, when explaining, then it is refused with that reason', () => {
    const d = explain({ projects: lookupOf() });
    expect(d).toMatchObject({ allowed: false, reason: 'project "team-a" not found', projectChain: [] });
  });

  it('given a server that is not registered, when the service requires registration, then it is refused; offline it is a warning', () => {
    const dest = { server: 'https://unknown.example.com', namespace: 'team-a-dev' };
    expect(explain({ destination: dest, requireRegisteredCluster: true })).toMatchObject({
      allowed: false,
      reason: 'cluster with server "https://unknown.example.com" is not registered',
    });
    const offline = explain({ destination: dest });
    expect(offline.allowed).toBe(true);
    expect(offline.warnings).toContain(
      'cluster with server "https://unknown.example.com" is not registered; assuming it exists',
    );
  });

  it('given resources the sync would apply, when explaining, then each kind is checked along the chain', () => {
    const d = explain({
      resources: [
        { group: 'apps', kind: 'Deployment', namespaced: true },
        { group: '', kind: 'Namespace', namespaced: false },
      ],
    });
    expect(d.allowed).toBe(false);
    expect(d.reason).toBe(
      'cluster-scoped resource Namespace is not permitted by project "team-a" (clusterResourceWhitelist/Blacklist)',
    );
  });
});

describe('explainSync: Applications that deliver AppProjects (allowedParentProjects)', () => {
  const admin = project('default', {
    sourceRepos: ['*'],
    destinations: [{ server: '*', namespace: '*' }],
    namespaceResourceWhitelist: [{ group: 'argoproj.io', kind: 'AppProject' }],
  });
  const noClusterResources = project('no-cluster-resources', {
    sourceRepos: ['*'],
    clusterResourceWhitelist: [],
  });
  const selfService = application('self-service-projects', {
    project: 'default',
    destination: { server: IN_CLUSTER_URL, namespace: 'argocd' },
    allowedParentProjects: ['no-cluster-resources'],
  });
  const run = (...delivered: ReturnType<typeof project>[]) =>
    explainSync({
      application: selfService,
      projects: lookupOf(admin, noClusterResources),
      clusters: [],
      impersonation: false,
      strict: false,
      deliveredProjects: delivered,
    });

  it('given an AppProject under an allowed parent, when explaining, then it is allowed', () => {
    const d = run(
      project('my-app', {
        parentProject: 'no-cluster-resources',
        sourceRepos: ['https://company.github.com/developers/my-app.git'],
      }),
    );
    expect(d.allowed).toBe(true);
    expect(d.checks.find((c) => c.check === 'delivered-project')?.reason).toBe(
      'AppProject "my-app" is bounded by no-cluster-resources',
    );
  });

  it('given an AppProject wider than its parent, when explaining, then the sync fails naming the field, the value and the ancestor', () => {
    const d = run(
      project('my-app', {
        parentProject: 'no-cluster-resources',
        sourceRepos: ['*'],
        clusterResourceWhitelist: [{ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' }],
      }),
    );
    expect(d.allowed).toBe(false);
    expect(d.reason).toBe(
      'AppProject "my-app": is wider than its parent chain: spec.clusterResourceWhitelist[0]: cluster-scoped resource rbac.authorization.k8s.io/ClusterRole is not allowed by ancestor project "no-cluster-resources": its spec.clusterResourceWhitelist is empty or absent: it allows no cluster-scoped resources',
    );
  });

  it('given a stored child that became wider when its parent was narrowed, when delivered unchanged, then it is not refused (the intersection applies at use)', () => {
    const child = project('my-app', {
      parentProject: 'no-cluster-resources',
      sourceRepos: ['*'],
      clusterResourceWhitelist: [{ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' }],
    });
    const d = explainSync({
      application: selfService,
      projects: lookupOf(admin, noClusterResources, child),
      clusters: [],
      impersonation: false,
      strict: false,
      deliveredProjects: [
        project('my-app', {
          parentProject: 'no-cluster-resources',
          clusterResourceWhitelist: [{ kind: 'ClusterRole', group: 'rbac.authorization.k8s.io' }],
          sourceRepos: ['*'],
        }),
      ],
    });
    expect(d.allowed).toBe(true);
    // changed in any way, it is checked again
    const changed = explainSync({
      application: selfService,
      projects: lookupOf(admin, noClusterResources, child),
      clusters: [],
      impersonation: false,
      strict: false,
      deliveredProjects: [project('my-app', { ...child.spec, description: 'edited' })],
    });
    expect(changed.allowed).toBe(false);
  });

  it('given an AppProject without a parent, when explaining, then the sync fails', () => {
    expect(run(project('rogue', { sourceRepos: ['*'] })).reason).toContain(
      'AppProject "rogue": has no spec.parentProject',
    );
  });

  it('given an AppProject under another parent, when explaining, then the sync fails', () => {
    expect(run(project('rogue', { parentProject: 'default' })).reason).toContain(
      'spec.parentProject "default" is not one of the allowedParentProjects',
    );
  });

  it("given the proposal's own example (an AppProject that names itself as parent), when explaining, then the sync fails", () => {
    expect(run(project('no-cluster-resources', { parentProject: 'no-cluster-resources' })).allowed).toBe(
      false,
    );
  });

  it('given an AppProject that would replace an allowed parent, when explaining, then the sync fails', () => {
    const tenants = project('tenants', { sourceRepos: ['*'] });
    const two = application('self-service-projects', {
      project: 'default',
      destination: { server: IN_CLUSTER_URL, namespace: 'argocd' },
      allowedParentProjects: ['no-cluster-resources', 'tenants'],
    });
    const d = explainSync({
      application: two,
      projects: lookupOf(admin, noClusterResources, tenants),
      clusters: [],
      impersonation: false,
      strict: false,
      deliveredProjects: [
        project('no-cluster-resources', {
          parentProject: 'tenants',
          clusterResourceWhitelist: [{ group: '*', kind: '*' }],
        }),
      ],
    });
    expect(d.allowed).toBe(false);
    expect(d.reason).toContain('is itself one of the allowedParentProjects');
  });

  it('given an allowedParentProjects pattern that is not a glob, when explaining, then every delivered AppProject is refused naming the pattern', () => {
    const d = explainSync({
      application: application('self-service-projects', {
        project: 'default',
        destination: { server: IN_CLUSTER_URL, namespace: 'argocd' },
        allowedParentProjects: ['no-cluster-resources', '{unclosed'],
      }),
      projects: lookupOf(admin, noClusterResources),
      clusters: [],
      impersonation: false,
      strict: false,
      deliveredProjects: [project('my-app', { parentProject: 'no-cluster-resources' })],
    });
    expect(d.allowed).toBe(false);
    expect(d.checks.filter((c) => c.check === 'delivered-project')).toEqual([
      {
        check: 'delivered-project',
        allowed: false,
        reason:
          'AppProject "my-app": spec.allowedParentProjects[1] of Application "self-service-projects" is not a valid glob',
      },
    ]);
  });
});

describe('explainSync: objects that name their own namespace', () => {
  it('given an object in a namespace the project does not permit, when explaining, then it is refused naming the object', () => {
    const d = explainSync({
      application: application('guestbook', {
        project: 'team-a',
        destination: { server: IN_CLUSTER_URL, namespace: 'team-a-prod' },
      }),
      projects: lookupOf(teamA),
      clusters,
      impersonation: true,
      strict: false,
      resources: [
        { group: '', kind: 'ConfigMap', namespaced: true, namespace: 'team-a-dev', name: 'ok' },
        { group: '', kind: 'ConfigMap', namespaced: true, namespace: 'kube-system', name: 'sneaky' },
      ],
    });
    expect(d.allowed).toBe(false);
    expect(d.reason).toContain(
      'ConfigMap "sneaky": destination server "https://kubernetes.default.svc" (cluster "in-cluster"), namespace "kube-system" is not permitted',
    );
  });
});
