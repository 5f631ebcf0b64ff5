// The sync service on real infrastructure — PostgreSQL, NATS JetStream and two real kube-apiservers
// — deciding who a sync runs as: the resolved ServiceAccount for every request (the API servers'
// audit logs prove it), refusals naming the account, verb, resource and namespace, the project
// chain and self-service rules, and the control-plane credentials when impersonation is off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { CoreV1Api } from '@kubernetes/client-node';
import {
  effectiveUser,
  ensureClusterRole,
  ensureClusterRoleBinding,
  seedTenant,
  type KubeCluster,
} from '@capstan/test/kube';
import { startSyncHarness, type SyncHarness } from './test-support/harness.js';
import {
  application,
  cm,
  configMapsIn,
  project,
  rendered,
  startTestClusters,
  teamAProject,
} from './test-support/fixtures.js';

let a: KubeCluster;
let b: KubeCluster;
let stopClusters: () => Promise<void>;

beforeAll(async () => {
  ({ a, b, stop: stopClusters } = await startTestClusters());
}, 240_000);

afterAll(async () => stopClusters?.());

describe('sync with impersonation on', () => {
  let h: SyncHarness;

  beforeAll(async () => {
    h = await startSyncHarness([a, b], { impersonation: true, manifests: rendered });
    await h.registerCluster(a, 'a');
    await h.registerCluster(b, 'remote');
    await h.putProject(teamAProject(a));
  }, 120_000);

  afterAll(async () => h?.stop());

  it('given an allowed sync, when requested, then every write is made as the resolved ServiceAccount and recorded', async () => {
    await h.putApplication(application('guestbook', 'team-a', { server: a.server, namespace: 'team-a' }));
    const since = await a.audit.mark();
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { objects: [cm('one'), cm('two')] },
    );
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(a, 'team-a')).toEqual(['one', 'two']);

    const events = await h.eventsOf(op);
    expect(events.map((e) => e.type)).toEqual([
      'io.capstan.sync.started.v1',
      'io.capstan.sync.resource-synced.v1',
      'io.capstan.sync.resource-synced.v1',
      'io.capstan.sync.succeeded.v1',
    ]);
    expect(events.at(-1)!.data.identity).toEqual({
      impersonation: true,
      username: 'system:serviceaccount:team-a:deployer',
    });

    // The API server saw every request of the sync as the ServiceAccount, none as the control plane itself.
    const audit = await a.audit.flush({ since });
    const fromSync = audit.filter((e) => e.user.username === a.controlPlaneUsername);
    expect(fromSync.length).toBeGreaterThan(0);
    expect(
      fromSync.every((e) => e.impersonatedUser?.username === 'system:serviceaccount:team-a:deployer'),
    ).toBe(true);
    const writes = fromSync.filter((e) => e.verb === 'patch' && e.objectRef?.resource === 'configmaps');
    expect(writes.map((e) => [effectiveUser(e), e.objectRef?.name, e.responseStatus?.code])).toEqual(
      expect.arrayContaining([
        ['system:serviceaccount:team-a:deployer', 'one', 201],
        ['system:serviceaccount:team-a:deployer', 'two', 201],
      ]),
    );

    const decision = await sql<{
      decision: string;
      username: string;
      matched_rule_index: number;
      impersonation: boolean;
    }>`
      select decision, username, matched_rule_index, impersonation from audit.sync_decisions where sync_id = ${op}`.execute(
      h.db,
    );
    expect(decision.rows).toEqual([
      {
        decision: 'allow',
        username: 'system:serviceaccount:team-a:deployer',
        matched_rule_index: 0,
        impersonation: true,
      },
    ]);
    const results = await sql<{ verb: string; name: string; identity: string; http_status: number }>`
      select verb, name, identity, http_status from audit.resource_results where sync_id = ${op} order by name`.execute(
      h.db,
    );
    expect(results.rows).toEqual([
      { verb: 'apply', name: 'one', identity: 'system:serviceaccount:team-a:deployer', http_status: 200 },
      { verb: 'apply', name: 'two', identity: 'system:serviceaccount:team-a:deployer', http_status: 200 },
    ]);
  });

  it('given a resource the ServiceAccount may not write, when synced, then the sync fails naming the account, verb, resource and namespace', async () => {
    await seedTenant(a.adminKubeconfig, { namespace: 'readonly', serviceAccounts: [] });
    await h.putApplication(application('viewer', 'team-a', { server: a.server, namespace: 'readonly' }));
    const since = await a.audit.mark();
    const op = await h.requestSync({ namespace: 'argocd', name: 'viewer' }, { objects: [cm('nope')] });
    const terminal = await h.waitForTerminal(op);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toContain(
      'system:serviceaccount:team-a:reader may not patch configmaps "nope" in namespace "readonly"',
    );
    const failed = (await h.eventsOf(op)).filter((e) => e.type === 'io.capstan.sync.failed.v1');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.data).toMatchObject({ phase: 'apply' });
    // The pre-flight access review (made as the ServiceAccount) refused before any write.
    const audit = (await a.audit.flush({ since })).filter((e) => e.user.username === a.controlPlaneUsername);
    expect(audit.filter((e) => e.verb === 'patch')).toEqual([]);
    expect(
      audit.filter((e) => e.objectRef?.resource === 'selfsubjectaccessreviews').map(effectiveUser),
    ).toEqual(['system:serviceaccount:team-a:reader']);
  });

  it('given a destination by cluster name, when synced, then the rule sees the cluster URL and the second API server is written as its ServiceAccount', async () => {
    await h.putApplication(application('web', 'team-a', { name: 'remote', namespace: 'web' }));
    const since = await b.audit.mark();
    const op = await h.requestSync({ namespace: 'argocd', name: 'web' }, { objects: [cm('site')] });
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(b, 'web')).toEqual(['site']);
    const audit = await b.audit.flush({ since });
    const writes = audit.filter((e) => e.verb === 'patch' && e.objectRef?.name === 'site');
    expect(writes.map(effectiveUser)).toEqual(['system:serviceaccount:web:deployer']);
  });

  it('given a self-service child project that picks another ServiceAccount than its parent, when synced, then it is refused before touching the cluster', async () => {
    await h.putProject(
      project('tenants', {
        destinations: [{ server: '*', namespace: 'team-a*' }],
        destinationServiceAccounts: [{ server: '*', namespace: 'team-a', defaultServiceAccount: 'deployer' }],
      }),
    );
    await h.putProject(
      project('team-a-self', {
        parentProject: 'tenants',
        destinations: [{ server: '*', namespace: '*' }],
        destinationServiceAccounts: [
          { server: '*', namespace: '*', defaultServiceAccount: 'team-a-system:deployer' },
        ],
      }),
    );
    await h.putApplication(application('escalate', 'team-a-self', { server: a.server, namespace: 'team-a' }));
    const since = await a.audit.mark();
    const op = await h.requestSync({ namespace: 'argocd', name: 'escalate' }, { objects: [cm('escalated')] });
    const terminal = await h.waitForTerminal(op);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toContain(
      'a project cannot run a sync as a ServiceAccount its parents would not use',
    );
    const row = await sql<{ decision: string; project_chain: string[] }>`
      select decision, project_chain from audit.sync_decisions where sync_id = ${op}`.execute(h.db);
    expect(row.rows).toEqual([{ decision: 'deny', project_chain: ['team-a-self', 'tenants'] }]);
    // The reconciler keeps watching the earlier tests' Applications as their ServiceAccounts (and
    // retries the watches they may not make): those lists and watches are not this sync's.
    const othersWatches = (e: { verb: string; impersonatedUser?: { username: string } }) =>
      (e.verb === 'list' || e.verb === 'watch') &&
      e.impersonatedUser !== undefined &&
      e.impersonatedUser.username !== 'system:serviceaccount:team-a-system:deployer';
    const touched = (await a.audit.flush({ since })).filter(
      (e) => e.user.username === a.controlPlaneUsername && !othersWatches(e),
    );
    expect(touched).toEqual([]);
  });

  it('given an Application that delivers an AppProject outside its allowedParentProjects, when synced, then it is refused', async () => {
    await h.putApplication(
      application(
        'projects',
        'team-a',
        { server: a.server, namespace: 'team-a' },
        { allowedParentProjects: ['tenants'] },
      ),
    );
    const rogue = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AppProject',
      metadata: { name: 'rogue', namespace: 'argocd' },
      spec: { sourceRepos: ['*'] },
    };
    const op = await h.requestSync({ namespace: 'argocd', name: 'projects' }, { objects: [rogue] });
    const terminal = await h.waitForTerminal(op);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toContain('AppProject "rogue": has no spec.parentProject');
  });

  it('given CreateNamespace=true, when synced, then the destination namespace is created first, as the ServiceAccount, if the project chain permits Namespaces', async () => {
    await ensureClusterRole(a.adminKubeconfig, 'ns-maker', [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'create', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch'] },
    ]);
    await ensureClusterRoleBinding(a.adminKubeconfig, 'ns-maker', 'ns-maker', [
      { kind: 'ServiceAccount', name: 'deployer', namespace: 'team-a' },
    ]);
    await h.putProject(
      project('ns-maker', {
        destinations: [{ server: '*', namespace: 'fresh-*' }],
        clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
        destinationServiceAccounts: [
          { server: '*', namespace: 'fresh-*', defaultServiceAccount: 'team-a:deployer' },
        ],
      }),
    );
    const syncPolicy = {
      syncOptions: ['CreateNamespace=true'],
      managedNamespaceMetadata: { labels: { team: 'a' } },
    };
    await h.putApplication(
      application('fresh', 'ns-maker', { server: a.server, namespace: 'fresh-1' }, { syncPolicy }),
    );
    const since = await a.audit.mark();
    const op = await h.requestSync({ namespace: 'argocd', name: 'fresh' }, { objects: [cm('inside')] });
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    const ns = await a.adminKubeconfig.makeApiClient(CoreV1Api).readNamespace({ name: 'fresh-1' });
    expect(ns.metadata?.labels).toMatchObject({ team: 'a' });
    expect(await configMapsIn(a, 'fresh-1')).toEqual(['inside']);
    const writes = (await a.audit.flush({ since })).filter((e) => e.verb === 'patch');
    expect(writes.map((e) => [e.objectRef?.resource, effectiveUser(e)])).toEqual([
      ['namespaces', 'system:serviceaccount:team-a:deployer'],
      ['configmaps', 'system:serviceaccount:team-a:deployer'],
    ]);

    await h.putApplication(
      application('fresh-denied', 'team-a', { server: a.server, namespace: 'fresh-2' }, { syncPolicy }),
    );
    const denied = await h.requestSync(
      { namespace: 'argocd', name: 'fresh-denied' },
      { objects: [cm('inside')] },
    );
    const terminal = await h.waitForTerminal(denied);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toContain(
      'cluster-scoped resource Namespace "fresh-2" is not permitted by project "team-a"',
    );
  });
});

describe('sync with impersonation off', () => {
  let h: SyncHarness;

  beforeAll(async () => {
    h = await startSyncHarness([a], { impersonation: false });
    await h.registerCluster(a, 'a');
    await h.putProject(
      project('team-a', {
        destinations: [{ server: '*', namespace: '*' }],
        destinationServiceAccounts: [{ server: '*', namespace: '*', defaultServiceAccount: 'deployer' }],
      }),
    );
    await h.putApplication(
      application('guestbook', 'team-a', { server: a.server, namespace: 'team-a-system' }),
    );
  }, 120_000);

  afterAll(async () => h?.stop());

  it('given destinationServiceAccounts, when synced with the flag off, then the cluster credentials are used and a warning says the rules are ignored', async () => {
    const since = await a.audit.mark();
    const op = await h.requestSync({ namespace: 'argocd', name: 'guestbook' }, { objects: [cm('plain')] });
    const terminal = await h.waitForTerminal(op);
    const events = await h.eventsOf(op);
    expect(events.find((e) => e.type === 'io.capstan.sync.impersonation-ignored.v1')?.data).toMatchObject({
      projects: [{ name: 'team-a', rules: 1 }],
    });
    // The test cluster's control-plane identity may only impersonate: the pre-flight access review,
    // made as itself (nothing impersonated), says it may not write, so no write is even attempted.
    const audit = (await a.audit.flush({ since })).filter((e) => e.user.username === a.controlPlaneUsername);
    expect(audit.length).toBeGreaterThan(0);
    expect(audit.filter((e) => e.impersonatedUser !== undefined)).toEqual([]);
    expect(audit.some((e) => e.objectRef?.resource === 'selfsubjectaccessreviews')).toBe(true);
    expect(audit.filter((e) => e.verb === 'patch')).toEqual([]);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toContain(
      'control-plane credentials of cluster a may not patch configmaps "plain" in namespace "team-a-system"',
    );
    const row = await sql<{
      impersonation: boolean;
      username: string | null;
    }>`select impersonation, username from audit.sync_decisions where sync_id = ${op}`.execute(h.db);
    expect(row.rows).toEqual([{ impersonation: false, username: null }]);
  });
});
