// The sync service end to end on real infrastructure: PostgreSQL, NATS JetStream and two real
// kube-apiservers with several namespaces and ServiceAccounts of different rights. The API
// servers' audit logs prove who wrote what.
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  startCluster,
  seedTenant,
  effectiveUser,
  ensureClusterRole,
  ensureClusterRoleBinding,
  CONTROL_PLANE_USERNAME,
  type KubeCluster,
} from '@capstan/test/kube';
import { CoreV1Api } from '@kubernetes/client-node';
import { newEvent, repositoryRevisionChanged } from '@capstan/events';
import { startSyncHarness, waitUntil, type SyncHarness } from './test-support/harness.js';
import { inlineOr } from './manifests/repo-manifests.js';
import type { ManifestSource } from './manifests/manifest-source.js';

/** Stands in for the repo service's manifest generation: renders one ConfigMap named after the commit. */
const rendered: ManifestSource = {
  async render(_app, request) {
    const sha = request.revision ?? 'HEAD';
    return {
      revision: sha,
      objects: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `at-${sha.slice(0, 7)}` }, data: {} },
      ],
    };
  },
};

const cm = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...extra },
  data: { key: name },
});

const project = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'AppProject',
  metadata: { name, namespace: 'argocd' },
  spec: { sourceRepos: ['*'], ...spec },
});

const application = (
  name: string,
  projectName: string,
  destination: Record<string, unknown>,
  spec: Record<string, unknown> = {},
) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: { name, namespace: 'argocd' },
  spec: {
    project: projectName,
    source: { repoURL: 'https://git.example.com/apps.git', path: name, targetRevision: 'HEAD' },
    destination,
    ...spec,
  },
});

const writeConfigMaps = [
  {
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get', 'list', 'create', 'patch', 'update', 'delete'],
  },
];
const readConfigMaps = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }];

let a: KubeCluster;
let b: KubeCluster;

beforeAll(async () => {
  [a, b] = await Promise.all([
    startCluster({ name: 'sync-a', log: () => {} }),
    startCluster({ name: 'sync-b', log: () => {} }),
  ]);
  await seedTenant(a.adminKubeconfig, {
    namespace: 'team-a',
    serviceAccounts: ['deployer', { name: 'reader', rules: readConfigMaps }],
    rules: writeConfigMaps,
  });
  await seedTenant(a.adminKubeconfig, {
    namespace: 'team-a-system',
    serviceAccounts: ['deployer'],
    rules: writeConfigMaps,
  });
  await seedTenant(b.adminKubeconfig, {
    namespace: 'web',
    serviceAccounts: ['deployer'],
    rules: writeConfigMaps,
  });
}, 240_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

const configMapsIn = async (cluster: KubeCluster, namespace: string) =>
  (await cluster.adminKubeconfig.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace })).items
    .map((c) => c.metadata!.name!)
    .filter((n) => n !== 'kube-root-ca.crt')
    .sort();

describe('sync with impersonation on', () => {
  let h: SyncHarness;

  beforeAll(async () => {
    h = await startSyncHarness([a, b], { impersonation: true, manifests: inlineOr(rendered) });
    await h.registerCluster(a, 'a');
    await h.registerCluster(b, 'remote');
    await h.putProject(
      project('team-a', {
        destinations: [{ server: '*', namespace: '*' }],
        destinationServiceAccounts: [
          { server: a.server, namespace: 'team-a', defaultServiceAccount: 'deployer' },
          { server: 'https://127.0.0.1:*', namespace: 'web', defaultServiceAccount: 'deployer' },
          { server: '*', namespace: 'readonly', defaultServiceAccount: 'team-a:reader' },
        ],
      }),
    );
  }, 120_000);

  afterAll(async () => h?.stop());

  it('given an allowed sync, when requested, then every write is made as the resolved ServiceAccount and recorded', async () => {
    await h.putApplication(application('guestbook', 'team-a', { server: a.server, namespace: 'team-a' }));
    const since = await a.audit.mark();
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { manifests: [cm('one'), cm('two')] },
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
    const fromSync = audit.filter((e) => e.user.username === CONTROL_PLANE_USERNAME);
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
    const op = await h.requestSync({ namespace: 'argocd', name: 'viewer' }, { manifests: [cm('nope')] });
    const terminal = await h.waitForTerminal(op);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toContain(
      'system:serviceaccount:team-a:reader may not patch configmaps "nope" in namespace "readonly"',
    );
    const failed = (await h.eventsOf(op)).filter((e) => e.type === 'io.capstan.sync.failed.v1');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.data).toMatchObject({ phase: 'apply' });
    // The pre-flight access review (made as the ServiceAccount) refused before any write.
    const audit = (await a.audit.flush({ since })).filter((e) => e.user.username === CONTROL_PLANE_USERNAME);
    expect(audit.filter((e) => e.verb === 'patch')).toEqual([]);
    expect(
      audit.filter((e) => e.objectRef?.resource === 'selfsubjectaccessreviews').map(effectiveUser),
    ).toEqual(['system:serviceaccount:team-a:reader']);
  });

  it('given a destination by cluster name, when synced, then the rule sees the cluster URL and the second API server is written as its ServiceAccount', async () => {
    await h.putApplication(application('web', 'team-a', { name: 'remote', namespace: 'web' }));
    const since = await b.audit.mark();
    const op = await h.requestSync({ namespace: 'argocd', name: 'web' }, { manifests: [cm('site')] });
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(b, 'web')).toEqual(['site']);
    const audit = await b.audit.flush({ since });
    const writes = audit.filter((e) => e.verb === 'patch' && e.objectRef?.name === 'site');
    expect(writes.map(effectiveUser)).toEqual(['system:serviceaccount:web:deployer']);
  });

  it('given a second sync without an object and prune, when synced, then the stale object is deleted as the ServiceAccount', async () => {
    const since = await a.audit.mark();
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { manifests: [cm('one')], prune: true },
    );
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(a, 'team-a')).toEqual(['one']);
    const audit = await a.audit.flush({ since });
    const deletes = audit.filter((e) => e.verb === 'delete' && e.objectRef?.name === 'two');
    expect(deletes.map((e) => [effectiveUser(e), e.responseStatus?.code])).toEqual([
      ['system:serviceaccount:team-a:deployer', 200],
    ]);
  });

  it('given hooks, when synced, then PreSync runs first and HookSucceeded deletes it, all as the ServiceAccount', async () => {
    const since = await a.audit.mark();
    const hook = cm('pre-hook', {
      annotations: {
        'argocd.argoproj.io/hook': 'PreSync',
        'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded',
      },
    });
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { manifests: [cm('one'), hook] },
    );
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    const audit = (await a.audit.flush({ since })).filter(
      (e) => e.objectRef?.resource === 'configmaps' && (e.verb === 'patch' || e.verb === 'delete'),
    );
    expect(audit.map((e) => [e.verb, e.objectRef?.name, effectiveUser(e)])).toEqual([
      ['patch', 'pre-hook', 'system:serviceaccount:team-a:deployer'],
      ['delete', 'pre-hook', 'system:serviceaccount:team-a:deployer'],
      ['patch', 'one', 'system:serviceaccount:team-a:deployer'],
    ]);
    expect(await configMapsIn(a, 'team-a')).toEqual(['one']);
  });

  it('given the same request delivered twice, when synced, then there is one operation and exactly one terminal event', async () => {
    const op = await h.requestSync({ namespace: 'argocd', name: 'guestbook' }, { manifests: [cm('one')] });
    await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { operationId: op, manifests: [cm('one')] },
    );
    await h.waitForTerminal(op);
    await new Promise((r) => setTimeout(r, 1_500));
    const terminals = (await h.eventsOf(op)).filter(
      (e) => e.type.endsWith('succeeded.v1') || e.type.endsWith('failed.v1'),
    );
    expect(terminals).toHaveLength(1);
  });

  it('given bad input, when synced, then each fails with a precise reason in the terminal event and the audit row, and the service keeps serving', async () => {
    await h.putApplication(
      application('orphan', 'missing-project', { server: a.server, namespace: 'team-a' }),
    );
    const missing = await h.requestSync({ namespace: 'argocd', name: 'orphan' }, { manifests: [cm('x')] });
    const unknownKind = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { manifests: [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }] },
    );
    const duplicate = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { manifests: [cm('dup'), cm('dup')] },
    );
    const badWave = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { manifests: [cm('w', { annotations: { 'argocd.argoproj.io/sync-wave': 'soon' } })] },
    );
    const secret = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      {
        manifests: [
          { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { p: 'hunter2' } },
        ],
      },
    );
    expect((await h.waitForTerminal(missing)).reason).toBe('project "missing-project" not found');
    expect((await h.waitForTerminal(unknownKind)).reason).toContain(
      'kind Widget of example.com/v1 is not served by cluster a',
    );
    expect((await h.waitForTerminal(duplicate)).reason).toBe(
      'invalid manifests: ConfigMap team-a/dup: duplicate object',
    );
    expect((await h.waitForTerminal(badWave)).reason).toContain(
      'metadata.annotations["argocd.argoproj.io/sync-wave"]: expected an integer, got "soon"',
    );
    expect((await h.waitForTerminal(secret)).reason).toContain('secrets never travel on the bus');
    const rows = await sql<{ sync_id: string; decision: string; reason: string }>`
      select sync_id, decision, reason from audit.sync_decisions where sync_id in (${missing}, ${secret})`.execute(
      h.db,
    );
    expect(rows.rows.map((r) => r.decision)).toEqual(['deny', 'deny']);
    expect(JSON.stringify(rows.rows)).not.toContain('hunter2');
    const ok = await h.requestSync({ namespace: 'argocd', name: 'guestbook' }, { manifests: [cm('one')] });
    expect(await h.waitForTerminal(ok)).toMatchObject({ status: 'succeeded' });
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
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'escalate' },
      { manifests: [cm('escalated')] },
    );
    const terminal = await h.waitForTerminal(op);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toContain(
      'a project cannot run a sync as a ServiceAccount its parents would not use',
    );
    const row = await sql<{ decision: string; project_chain: string[] }>`
      select decision, project_chain from audit.sync_decisions where sync_id = ${op}`.execute(h.db);
    expect(row.rows).toEqual([{ decision: 'deny', project_chain: ['team-a-self', 'tenants'] }]);
    const touched = (await a.audit.flush({ since })).filter(
      (e) => e.user.username === CONTROL_PLANE_USERNAME,
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
    const op = await h.requestSync({ namespace: 'argocd', name: 'projects' }, { manifests: [rogue] });
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
    const op = await h.requestSync({ namespace: 'argocd', name: 'fresh' }, { manifests: [cm('inside')] });
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
      { manifests: [cm('inside')] },
    );
    const terminal = await h.waitForTerminal(denied);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toContain(
      'cluster-scoped resource Namespace "fresh-2" is not permitted by project "team-a"',
    );
  });

  it('given an Application deleted with cascade, when the api says so, then everything it applied is deleted as its ServiceAccount', async () => {
    await h.putApplication(application('doomed', 'team-a', { server: a.server, namespace: 'team-a' }));
    const first = await h.requestSync(
      { namespace: 'argocd', name: 'doomed' },
      { manifests: [cm('doomed-1'), cm('doomed-2')] },
    );
    expect(await h.waitForTerminal(first)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(a, 'team-a')).toEqual(expect.arrayContaining(['doomed-1', 'doomed-2']));
    const since = await a.audit.mark();
    const eventId = await h.deleteApplication(
      { namespace: 'argocd', name: 'doomed' },
      { project: 'team-a', cascade: true },
    );
    const op = `delete:${eventId}`;
    await waitUntil(
      async () =>
        (await h.db
          .withSchema('sync')
          .selectFrom('operations')
          .select('status')
          .where('operation_id', '=', op)
          .executeTakeFirst()) !== undefined,
    );
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(a, 'team-a')).not.toEqual(expect.arrayContaining(['doomed-1']));
    const deletes = (await a.audit.flush({ since })).filter(
      (e) => e.verb === 'delete' && e.objectRef?.resource === 'configmaps',
    );
    expect(deletes.map((e) => [e.objectRef?.name, effectiveUser(e)]).sort()).toEqual([
      ['doomed-1', 'system:serviceaccount:team-a:deployer'],
      ['doomed-2', 'system:serviceaccount:team-a:deployer'],
    ]);
    expect(
      await h.db
        .withSchema('sync')
        .selectFrom('applications')
        .select('name')
        .where('name', '=', 'doomed')
        .executeTakeFirst(),
    ).toBeUndefined();
  });

  it('given a dry run, when synced, then the server-side dry-run runs as the ServiceAccount and nothing is written', async () => {
    const since = await a.audit.mark();
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { manifests: [cm('one'), cm('dry')], dryRun: true },
    );
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(a, 'team-a')).toEqual(['one']);
    const audit = await a.audit.flush({ since });
    const dry = audit.filter((e) => e.verb === 'patch' && e.objectRef?.name === 'dry');
    expect(dry.map((e) => [effectiveUser(e), e.requestURI.includes('dryRun=All')])).toEqual([
      ['system:serviceaccount:team-a:deployer', true],
    ]);
    const results = (await h.eventsOf(op))
      .filter((e) => e.type.endsWith('resource-synced.v1'))
      .map((e) => [e.data.status, e.data.message]);
    expect(results.map(([status]) => status)).toEqual(['DryRun', 'DryRun']);
    expect(results.map(([, message]) => message).sort()).toEqual([
      'ConfigMap team-a/dry would be created (server-side dry run as system:serviceaccount:team-a:deployer)',
      'ConfigMap team-a/one unchanged (server-side dry run as system:serviceaccount:team-a:deployer)',
    ]);
  });

  it('given a target cluster that is down, when synced, then that sync is retried with backoff and fails while other Applications keep syncing', async () => {
    await h.registerCluster({ server: 'https://127.0.0.1:1' }, 'down');
    await h.putApplication(
      application('unreachable', 'team-a', { server: 'https://127.0.0.1:1', namespace: 'team-a' }),
    );
    const stuck = await h.requestSync({ namespace: 'argocd', name: 'unreachable' }, { manifests: [cm('x')] });
    const fine = await h.requestSync({ namespace: 'argocd', name: 'guestbook' }, { manifests: [cm('one')] });
    expect(await h.waitForTerminal(fine)).toMatchObject({ status: 'succeeded' });
    const terminal = await h.waitForTerminal(stuck);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toContain('target cluster unreachable after 2 attempts');
    const started = (await h.eventsOf(stuck))
      .filter((e) => e.type.endsWith('started.v1'))
      .map((e) => e.data.attempt);
    expect(started).toEqual([1, 2]);
  });

  it('given a target cluster that accepts connections but never answers, when synced, then each request times out and the sync fails after its attempts', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const server = `https://127.0.0.1:${(silent.address() as { port: number }).port}`;
    try {
      await h.registerCluster({ server }, 'silent');
      await h.putApplication(application('hung', 'team-a', { server, namespace: 'team-a' }));
      const op = await h.requestSync({ namespace: 'argocd', name: 'hung' }, { manifests: [cm('x')] });
      const terminal = await h.waitForTerminal(op);
      expect(terminal.status).toBe('failed');
      expect(terminal.reason).toContain('target cluster unreachable after 2 attempts');
      expect(terminal.reason).toContain('no answer within 1500 ms');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('given an automated Application, when the repo service reports a new revision, then it is synced at that commit as its ServiceAccount', async () => {
    await h.putApplication(
      application(
        'auto',
        'team-a',
        { server: a.server, namespace: 'team-a' },
        {
          source: { repoURL: 'https://git.example.com/apps.git', path: 'auto', targetRevision: 'main' },
          syncPolicy: { automated: { prune: true } },
        },
      ),
    );
    const sha = 'c0ffee'.padEnd(40, '0');
    const event = newEvent(
      repositoryRevisionChanged.type,
      {
        repoURL: 'https://git.example.com/apps.git',
        revision: 'main',
        project: 'team-a',
        sha,
        previousSha: null,
        detectedBy: 'push',
      },
      { subject: 'repository-watches/w1', actor: 'service:repo', source: 'capstan/repo' },
    );
    await h.bus.publish(event);
    const op = `auto:${event.id}:argocd/auto`;
    await waitUntil(
      async () =>
        (await h.db
          .withSchema('sync')
          .selectFrom('operations')
          .select('status')
          .where('operation_id', '=', op)
          .executeTakeFirst()) !== undefined,
    );
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    const done = (await h.eventsOf(op)).at(-1)!;
    expect(done.data).toMatchObject({
      revision: sha,
      identity: { username: 'system:serviceaccount:team-a:deployer' },
    });
    expect(await configMapsIn(a, 'team-a')).toContain('at-c0ffee0');
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
    const op = await h.requestSync({ namespace: 'argocd', name: 'guestbook' }, { manifests: [cm('plain')] });
    const terminal = await h.waitForTerminal(op);
    const events = await h.eventsOf(op);
    expect(events.find((e) => e.type === 'io.capstan.sync.impersonation-ignored.v1')?.data).toMatchObject({
      projects: [{ name: 'team-a', rules: 1 }],
    });
    // The test cluster's control-plane identity may only impersonate: the pre-flight access review,
    // made as itself (nothing impersonated), says it may not write, so no write is even attempted.
    const audit = (await a.audit.flush({ since })).filter((e) => e.user.username === CONTROL_PLANE_USERNAME);
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
