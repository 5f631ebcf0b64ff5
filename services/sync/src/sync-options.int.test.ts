// Argo CD's sync options and syncPolicy.retry on real infrastructure — PostgreSQL, NATS JetStream
// and a real kube-apiserver — every request as the resolved ServiceAccount. The test API server
// runs no controller manager (no garbage collector): a delete with propagationPolicy Orphan or
// Foreground leaves the object terminating with the finalizer the API server put on it, which is
// what these tests look at.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  effectiveUser,
  ensureClusterRole,
  ensureClusterRoleBinding,
  ensureNamespace,
  ensureRole,
  ensureRoleBinding,
  ensureServiceAccount,
  seedTenant,
  startCluster,
  type KubeCluster,
} from '@capstan/test/kube';
import { startSyncHarness, waitUntil, type SyncHarness } from './test-support/harness.js';
import { application, cm, configMapsIn, project } from './test-support/fixtures.js';

let a: KubeCluster;
let h: SyncHarness;
const core = () => a.adminKubeconfig.makeApiClient(CoreV1Api);
const writeConfigMaps = [
  {
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get', 'list', 'create', 'patch', 'update', 'delete'],
  },
];

beforeAll(async () => {
  a = await startCluster({ name: 'sync-options', log: () => {} });
  await seedTenant(a.adminKubeconfig, {
    namespace: 'team-a',
    serviceAccounts: ['deployer'],
    rules: writeConfigMaps,
  });
  await ensureServiceAccount(a.adminKubeconfig, 'team-a', 'retrier');
  h = await startSyncHarness([a], { impersonation: true });
  await h.registerCluster(a, 'a');
  await h.putProject(
    project('team-a', {
      destinations: [{ server: '*', namespace: '*' }],
      clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
      destinationServiceAccounts: [
        { server: '*', namespace: 'team-a', defaultServiceAccount: 'deployer' },
        // A ServiceAccount of its own: the cluster-wide rights granted to deployer below do not reach it.
        { server: '*', namespace: 'retry-*', defaultServiceAccount: 'team-a:retrier' },
        { server: '*', namespace: 'opts-*', defaultServiceAccount: 'team-a:deployer' },
      ],
    }),
  );
}, 240_000);

afterAll(async () => {
  await h?.stop();
  await a?.stop();
});

const app = (name: string, syncPolicy: Record<string, unknown> = {}, namespace = 'team-a', extra = {}) =>
  application(name, 'team-a', { server: a.server, namespace }, { syncPolicy, ...extra });

/** Syncs and returns the operation's events (data), asserting the outcome. */
async function sync(
  name: string,
  objects: unknown[],
  options: {
    prune?: boolean;
    expect?: 'succeeded' | 'failed';
    resources?: { group: string; kind: string; name: string; namespace: string }[];
  } = {},
) {
  const op = await h.requestSync(
    { namespace: 'argocd', name },
    {
      objects,
      prune: options.prune ?? false,
      ...(options.resources ? { resources: options.resources } : {}),
    },
  );
  const terminal = await h.waitForTerminal(op);
  expect(terminal.status, terminal.reason ?? '').toBe(options.expect ?? 'succeeded');
  return { op, terminal, events: (await h.eventsOf(op)).map((e) => ({ type: e.type, ...e.data })) };
}

const withOptions = (name: string, options: string) =>
  cm(name, { annotations: { 'argocd.argoproj.io/sync-options': options } }) as ReturnType<typeof cm> & {
    data: Record<string, string>;
  };

describe('sync options', () => {
  it('given Prune=false on an object, when it leaves git and the app prunes, then it stays (PruneSkipped) and is still tracked for the next prune', async () => {
    await h.putApplication(app('keeper'));
    await sync('keeper', [cm('keep-plain'), withOptions('keep-me', 'Prune=false')]);
    const { events } = await sync('keeper', [], { prune: true });
    expect(events).toContainEqual(
      expect.objectContaining({
        name: 'keep-me',
        status: 'PruneSkipped',
        message: 'ConfigMap team-a/keep-me ignored (no prune): Prune=false',
      }),
    );
    expect(events).toContainEqual(expect.objectContaining({ name: 'keep-plain', status: 'Pruned' }));
    const left = await configMapsIn(a, 'team-a');
    expect(left).toContain('keep-me');
    expect(left).not.toContain('keep-plain');
    // Still this Application's: the next prune sees it again (Argo shows it as requiring pruning).
    const again = await sync('keeper', [], { prune: true });
    expect(again.events).toContainEqual(expect.objectContaining({ name: 'keep-me', status: 'PruneSkipped' }));
  });

  it("given a selective sync (Argo CD's resources), then only the named objects are applied and pruned, no hook runs, and the others stay the Application's", async () => {
    await h.putApplication(app('picker'));
    await sync('picker', [cm('pick-a'), cm('pick-b'), cm('pick-c'), cm('pick-d')]);
    const data = async (name: string) =>
      (await core().readNamespacedConfigMap({ name, namespace: 'team-a' })).data?.key;
    const changed = (name: string) => ({ ...cm(name), data: { key: `${name}-2` } });
    const hook = {
      ...cm('pick-hook'),
      metadata: { name: 'pick-hook', annotations: { 'argocd.argoproj.io/hook': 'PreSync' } },
    };
    const named = (name: string, namespace = '') => ({ group: '', kind: 'ConfigMap', name, namespace });
    // git now: a and b changed, c and d gone; the sync names a, c and the hook.
    const picked = await sync('picker', [changed('pick-a'), changed('pick-b'), hook], {
      prune: true,
      resources: [named('pick-a', 'team-a'), named('pick-c'), named('pick-hook')],
    });
    expect(await data('pick-a')).toBe('pick-a-2');
    expect(await data('pick-b')).toBe('pick-b');
    const left = await configMapsIn(a, 'team-a');
    expect(left).not.toContain('pick-c');
    expect(left).toContain('pick-d');
    expect(left).not.toContain('pick-hook');
    const touched = (picked.events as Array<Record<string, unknown>>)
      .filter((e) => e.type === 'io.capstan.sync.resource-synced.v1')
      .map((e) => e.name);
    expect(touched).toEqual(expect.arrayContaining(['pick-a', 'pick-c']));
    expect(touched).not.toContain('pick-b');
    expect(touched).not.toContain('pick-d');
    expect(touched).not.toContain('pick-hook');
    // d is still this Application's: a full sync with prune deletes it, and applies b.
    await sync('picker', [changed('pick-a'), changed('pick-b')], { prune: true });
    expect(await configMapsIn(a, 'team-a')).not.toContain('pick-d');
    expect(await data('pick-b')).toBe('pick-b-2');
  });

  it('given Prune=confirm, when pruned without confirmation then with the deletion-approved annotation, then it waits first and is pruned after', async () => {
    await h.putApplication(app('confirmer'));
    await sync('confirmer', [withOptions('confirm-me', 'Prune=confirm')]);
    const waiting = await sync('confirmer', [], { prune: true });
    expect(waiting.events).toContainEqual(
      expect.objectContaining({
        name: 'confirm-me',
        status: 'PruneSkipped',
        message: expect.stringContaining(
          'waiting for pruning confirmation of v1/ConfigMap/confirm-me (Prune=confirm)',
        ),
      }),
    );
    expect(await configMapsIn(a, 'team-a')).toContain('confirm-me');
    const approved = app('confirmer');
    (approved.metadata as Record<string, unknown>).annotations = {
      'argocd.argoproj.io/deletion-approved': new Date(Date.now() + 1_000).toISOString(),
    };
    await h.putApplication(approved);
    const pruned = await sync('confirmer', [], { prune: true });
    expect(pruned.events).toContainEqual(expect.objectContaining({ name: 'confirm-me', status: 'Pruned' }));
    expect(await configMapsIn(a, 'team-a')).not.toContain('confirm-me');
  });

  it('given PruneLast (Application or object), when synced with prune, then those objects are deleted after every Sync wave and the others before', async () => {
    await h.putApplication(app('pruner'));
    await sync('pruner', [cm('pl-stay'), cm('pl-early'), withOptions('pl-late', 'PruneLast=true')]);
    const since = await a.audit.mark();
    await sync('pruner', [cm('pl-stay', { labels: { v: '2' } })], { prune: true });
    const order = (await a.audit.flush({ since }))
      .filter((e) => e.objectRef?.resource === 'configmaps' && ['patch', 'delete'].includes(e.verb))
      .map((e) => `${e.verb} ${e.objectRef?.name}`);
    expect(order).toEqual(['delete pl-early', 'patch pl-stay', 'delete pl-late']);

    await h.putApplication(app('pruner-all', { syncOptions: ['PruneLast=true'] }));
    await sync('pruner-all', [cm('pla-stay'), cm('pla-gone')]);
    const since2 = await a.audit.mark();
    await sync('pruner-all', [cm('pla-stay')], { prune: true });
    const order2 = (await a.audit.flush({ since: since2 }))
      .filter((e) => e.objectRef?.resource === 'configmaps' && ['patch', 'delete'].includes(e.verb))
      .map((e) => `${e.verb} ${e.objectRef?.name}`);
    expect(order2).toEqual(['patch pla-stay', 'delete pla-gone']);
  });

  it('given PrunePropagationPolicy=orphan, when an object with a dependent is pruned, then the delete orphans (the dependent stays, owner reference and all)', async () => {
    await h.putApplication(app('orphaner', { syncOptions: ['PrunePropagationPolicy=orphan'] }));
    await sync('orphaner', [cm('owner-cm')]);
    const owner = await core().readNamespacedConfigMap({ name: 'owner-cm', namespace: 'team-a' });
    await core().createNamespacedConfigMap({
      namespace: 'team-a',
      body: {
        metadata: {
          name: 'dependent-cm',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-cm', uid: owner.metadata!.uid! },
          ],
        },
      },
    });
    const since = await a.audit.mark();
    const { events } = await sync('orphaner', [], { prune: true });
    expect(events).toContainEqual(
      expect.objectContaining({
        name: 'owner-cm',
        status: 'Pruned',
        message: 'ConfigMap team-a/owner-cm pruned as system:serviceaccount:team-a:deployer (orphan)',
      }),
    );
    const deletes = (await a.audit.flush({ since })).filter(
      (e) => e.verb === 'delete' && e.objectRef?.name === 'owner-cm',
    );
    expect(deletes.map((e) => [effectiveUser(e), /propagationPolicy=Orphan/.test(e.requestURI)])).toEqual([
      ['system:serviceaccount:team-a:deployer', true],
    ]);
    // The API server marks an orphaning delete with the orphan finalizer (the garbage collector,
    // absent here, would strip the dependents' owner references and then the finalizer).
    const terminating = await core().readNamespacedConfigMap({ name: 'owner-cm', namespace: 'team-a' });
    expect(terminating.metadata?.finalizers).toEqual(['orphan']);
    const dependent = await core().readNamespacedConfigMap({ name: 'dependent-cm', namespace: 'team-a' });
    expect(dependent.metadata?.deletionTimestamp).toBeUndefined();
  });

  it('given Replace=true, when synced twice, then the object is created, then replaced whole with PUT (fields gone from git go), and Force=true deletes and creates', async () => {
    await h.putApplication(app('replacer', { syncOptions: ['Replace=true'] }));
    const first = { ...cm('replaced'), data: { a: '1', b: '2' } };
    const since = await a.audit.mark();
    await sync('replacer', [first]);
    const second = await sync('replacer', [{ ...cm('replaced'), data: { a: '3' } }]);
    expect(second.events).toContainEqual(
      expect.objectContaining({
        name: 'replaced',
        message: 'ConfigMap team-a/replaced replaced as system:serviceaccount:team-a:deployer',
      }),
    );
    const live = await core().readNamespacedConfigMap({ name: 'replaced', namespace: 'team-a' });
    expect(live.data).toEqual({ a: '3' });
    const writes = (await a.audit.flush({ since }))
      .filter(
        (e) => e.objectRef?.name === 'replaced' && ['create', 'update', 'patch', 'delete'].includes(e.verb),
      )
      .map((e) => [e.verb, effectiveUser(e)]);
    expect(writes).toEqual([
      ['create', 'system:serviceaccount:team-a:deployer'],
      ['update', 'system:serviceaccount:team-a:deployer'],
    ]);

    const uid = live.metadata!.uid;
    const forced = withOptions('replaced', 'Replace=true,Force=true');
    await sync('replacer', [{ ...forced, data: { a: '4' } }]);
    const recreated = await core().readNamespacedConfigMap({ name: 'replaced', namespace: 'team-a' });
    expect(recreated.data).toEqual({ a: '4' });
    expect(recreated.metadata?.uid).not.toBe(uid);
  });

  it('given an unknown field, when synced, then strict validation refuses it, and Validate=false (Application or object) accepts it', async () => {
    const bad = { ...cm('unknown-field'), spec: { replicas: 1 } };
    await h.putApplication(app('validator'));
    const refused = await sync('validator', [bad], { expect: 'failed' });
    expect(refused.terminal.reason).toMatch(/unknown field "spec"|\.spec: field not declared in schema/);
    expect(await configMapsIn(a, 'team-a')).not.toContain('unknown-field');

    await sync('validator', [{ ...withOptions('unknown-field', 'Validate=false'), spec: { replicas: 1 } }]);
    expect(await configMapsIn(a, 'team-a')).toContain('unknown-field');

    await h.putApplication(app('validator-off', { syncOptions: ['Validate=false'] }));
    await sync('validator-off', [{ ...cm('unknown-field-2'), spec: { replicas: 1 } }]);
    expect(await configMapsIn(a, 'team-a')).toContain('unknown-field-2');
  });

  it('given CreateNamespace=true with managedNamespaceMetadata, when synced to an existing namespace, then its labels and annotations are applied as the ServiceAccount', async () => {
    await ensureClusterRole(a.adminKubeconfig, 'opts-ns', [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'create', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch'] },
    ]);
    await ensureClusterRoleBinding(a.adminKubeconfig, 'opts-ns', 'opts-ns', [
      { kind: 'ServiceAccount', name: 'deployer', namespace: 'team-a' },
    ]);
    await ensureNamespace(a.adminKubeconfig, 'opts-existing', { existing: 'yes' });
    await h.putApplication(
      app(
        'nsmeta',
        {
          syncOptions: ['CreateNamespace=true'],
          managedNamespaceMetadata: { labels: { team: 'a' }, annotations: { owner: 'team-a' } },
        },
        'opts-existing',
      ),
    );
    const since = await a.audit.mark();
    await sync('nsmeta', [cm('in-ns')]);
    const ns = await core().readNamespace({ name: 'opts-existing' });
    expect(ns.metadata?.labels).toMatchObject({ team: 'a', existing: 'yes' });
    expect(ns.metadata?.annotations).toMatchObject({ owner: 'team-a' });
    const nsWrites = (await a.audit.flush({ since })).filter(
      (e) => e.objectRef?.resource === 'namespaces' && e.verb === 'patch',
    );
    expect(nsWrites.map(effectiveUser)).toEqual(['system:serviceaccount:team-a:deployer']);
  });

  it('given ApplyOutOfSyncOnly=true, when an unchanged object is synced again, then it is not written; a changed one is', async () => {
    await h.putApplication(app('lazy', { syncOptions: ['ApplyOutOfSyncOnly=true'] }));
    await sync('lazy', [cm('lazy-same'), cm('lazy-changing')]);
    const since = await a.audit.mark();
    const { events } = await sync('lazy', [cm('lazy-same'), cm('lazy-changing', { labels: { v: '2' } })]);
    const patched = (await a.audit.flush({ since }))
      .filter((e) => e.verb === 'patch' && e.objectRef?.resource === 'configmaps')
      .map((e) => e.objectRef?.name);
    expect(patched).toEqual(['lazy-changing']);
    expect(events).toContainEqual(
      expect.objectContaining({
        name: 'lazy-same',
        status: 'Synced',
        message: 'ConfigMap team-a/lazy-same unchanged: live state already matches (ApplyOutOfSyncOnly)',
      }),
    );
  });

  it('given RespectIgnoreDifferences with a jsonPointer, when the live value differs from git, then the sync keeps the live value', async () => {
    await h.putApplication(
      app('respectful', { syncOptions: ['RespectIgnoreDifferences=true'] }, 'team-a', {
        ignoreDifferences: [{ group: '', kind: 'ConfigMap', name: 'tuned', jsonPointers: ['/data/size'] }],
      }),
    );
    await sync('respectful', [{ ...cm('tuned'), data: { size: '1', other: 'a' } }]);
    await core().patchNamespacedConfigMap({
      name: 'tuned',
      namespace: 'team-a',
      body: [{ op: 'replace', path: '/data/size', value: '5' }],
    });
    await sync('respectful', [{ ...cm('tuned'), data: { size: '1', other: 'b' } }]);
    const live = await core().readNamespacedConfigMap({ name: 'tuned', namespace: 'team-a' });
    expect(live.data).toEqual({ size: '5', other: 'b' });
  });

  it("given argocd-cm's system-level ignoreDifferences applied live, when synced with RespectIgnoreDifferences, then the live value is kept", async () => {
    // No ignoreDifferences in the Application: only argocd-cm's, applied while the service runs.
    await h.putApplication(app('system-respect', { syncOptions: ['RespectIgnoreDifferences=true'] }));
    await sync('system-respect', [{ ...cm('sys-tuned'), data: { size: '1', other: 'a' } }]);
    await core().patchNamespacedConfigMap({
      name: 'sys-tuned',
      namespace: 'team-a',
      body: [{ op: 'replace', path: '/data/size', value: '7' }],
    });
    await h.applySettings('argocd-cm', 1, {
      'resource.customizations.ignoreDifferences.ConfigMap': 'jsonPointers:\n- /data/size\n',
    });
    await sync('system-respect', [{ ...cm('sys-tuned'), data: { size: '1', other: 'b' } }]);
    const live = await core().readNamespacedConfigMap({ name: 'sys-tuned', namespace: 'team-a' });
    expect(live.data).toEqual({ size: '7', other: 'b' });
    // Taken away again: the next sync writes git's value.
    await h.applySettings('argocd-cm', 2, {});
    await sync('system-respect', [{ ...cm('sys-tuned'), data: { size: '1', other: 'c' } }]);
    const after = await core().readNamespacedConfigMap({ name: 'sys-tuned', namespace: 'team-a' });
    expect(after.data).toEqual({ size: '1', other: 'c' });
  });

  it("given argocd-cm's resource.exclusions, when synced, then excluded kinds are neither applied nor pruned, each said with Argo's ExcludedResourceWarning", async () => {
    await h.putApplication(app('excluding'));
    // An exclusion for another cluster leaves this one's ConfigMaps alone.
    await h.applySettings('argocd-cm', 3, {
      'resource.exclusions': "- apiGroups: ['']\n  kinds: [ConfigMap]\n  clusters: ['https://elsewhere.*']\n",
    });
    await sync('excluding', [cm('excl-kept')]);
    expect(await configMapsIn(a, 'team-a')).toContain('excl-kept');
    // For this cluster: the new ConfigMap is not applied, and the earlier one is not pruned.
    await h.applySettings('argocd-cm', 4, {
      'resource.exclusions': `- apiGroups: ['']\n  kinds: [ConfigMap]\n  clusters: ['${a.server}']\n`,
    });
    const { events } = await sync('excluding', [cm('excl-new')], { prune: true });
    expect(events).toContainEqual(
      expect.objectContaining({
        kind: 'ConfigMap',
        name: 'excl-new',
        status: 'ExcludedResourceWarning',
        message: 'Resource /ConfigMap excl-new is excluded in the settings',
      }),
    );
    expect(events).not.toContainEqual(expect.objectContaining({ name: 'excl-kept', status: 'Pruned' }));
    let left = await configMapsIn(a, 'team-a');
    expect(left).not.toContain('excl-new');
    expect(left).toContain('excl-kept');
    // Lifted: the next sync applies git's objects again.
    await h.applySettings('argocd-cm', 5, {});
    await sync('excluding', [cm('excl-new')]);
    left = await configMapsIn(a, 'team-a');
    expect(left).toContain('excl-new');
  });

  it('given an unknown sync option, when synced, then it is ignored as Argo does and the operation says so', async () => {
    await h.putApplication(app('typo', { syncOptions: ['CreateNamspace=true'] }));
    const { events, terminal } = await sync('typo', [cm('typo-cm')]);
    expect(terminal.reason).toBe('synced (1 sync option warning)');
    expect(events).toContainEqual(
      expect.objectContaining({
        kind: 'Application',
        name: 'typo',
        status: 'SyncOptionWarning',
        message: 'unknown sync option "CreateNamspace=true" in spec.syncPolicy.syncOptions ignored',
      }),
    );
  });

  it('given Delete=false on an object, when the Application is deleted with cascade, then that object stays and the rest goes', async () => {
    const doomed = app('deleter');
    await h.putApplication(doomed);
    await sync('deleter', [cm('del-plain'), withOptions('del-keep', 'Delete=false')]);
    const op = await h.requestDeletion(doomed);
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    const left = await configMapsIn(a, 'team-a');
    expect(left).toContain('del-keep');
    expect(left).not.toContain('del-plain');
    const events = (await h.eventsOf(op)).map((e) => e.data);
    expect(events).toContainEqual(
      expect.objectContaining({
        name: 'del-keep',
        status: 'DeleteSkipped',
        message: 'ConfigMap team-a/del-keep left in place: Delete=false',
      }),
    );
    expect(events.at(-1)).toMatchObject({ deleted: 1, skipped: 1 });
  });

  it('given a user request, when synced, then sync.started carries the trigger (the envelope actor) and the revision', async () => {
    await h.putApplication(app('triggered'));
    const { events } = await sync('triggered', [cm('triggered-cm')]);
    expect(events[0]).toMatchObject({
      type: 'io.capstan.sync.started.v1',
      attempt: 1,
      trigger: { kind: 'user', actor: 'alice' },
      revision: 'HEAD',
    });
  });
});

describe('syncPolicy.retry', () => {
  const retry = { limit: 10, backoff: { duration: '1s', factor: 1 } };
  const retriesOf = async (op: string) =>
    (
      await sql<{ retries: number }>`select retries from sync.operations where operation_id = ${op}`.execute(
        h.db,
      )
    ).rows[0]?.retries ?? 0;

  it('given a write the ServiceAccount may not do, when its RBAC is fixed within the retry window, then a retry succeeds and every attempt is visible', async () => {
    await ensureNamespace(a.adminKubeconfig, 'retry-rbac');
    await h.putApplication(app('retrier', { retry }, 'retry-rbac'));
    const op = await h.requestSync({ namespace: 'argocd', name: 'retrier' }, { objects: [cm('retried')] });
    // The first attempt is refused (no Role in retry-rbac yet) and a retry is scheduled.
    await waitUntil(async () => (await retriesOf(op)) >= 1);
    const row = (
      await sql<{
        status: string;
        reason: string;
      }>`select status, reason from sync.operations where operation_id = ${op}`.execute(h.db)
    ).rows[0]!;
    expect(row.reason).toMatch(/may not patch configmaps "retried".*Retrying attempt #\d+ in 1s\./);
    await ensureRole(a.adminKubeconfig, 'retry-rbac', 'writer', writeConfigMaps);
    await ensureRoleBinding(a.adminKubeconfig, 'retry-rbac', 'writer', { kind: 'Role', name: 'writer' }, [
      { kind: 'ServiceAccount', name: 'retrier', namespace: 'team-a' },
    ]);
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(a, 'retry-rbac')).toEqual(['retried']);
    const started = (await h.eventsOf(op)).filter((e) => e.type === 'io.capstan.sync.started.v1');
    expect(started.length).toBeGreaterThanOrEqual(2);
    expect(started.map((e) => e.data.attempt)).toEqual(started.map((_, i) => i + 1));
    expect(started[0]!.data.trigger).toEqual({ kind: 'user', actor: 'alice' });
    for (const e of started.slice(1)) expect(e.data.trigger).toEqual({ kind: 'retry', actor: 'automation' });
    const terminals = (await h.eventsOf(op)).filter((e) => /\.(succeeded|failed)\.v1$/.test(e.type));
    expect(terminals.map((e) => e.type)).toEqual(['io.capstan.sync.succeeded.v1']);
    // Every result says which attempt wrote it: one refused write per failed attempt, then the
    // write of the last one; every attempt decided on record with its number.
    const results = await sql<{ attempt: number; http_status: number | null }>`
      select attempt, http_status from audit.resource_results where sync_id = ${op} order by id`.execute(
      h.db,
    );
    const attempts = started.map((e) => e.data.attempt as number);
    expect(results.rows).toEqual(
      // (a refusal of the pre-flight access review has no HTTP status)
      attempts.map((n, i) => ({ attempt: n, http_status: i === attempts.length - 1 ? 200 : null })),
    );
    const decisions = await sql<{ attempt: number }>`
      select attempt from audit.sync_decisions where sync_id = ${op} order by id`.execute(h.db);
    expect(decisions.rows.map((r) => r.attempt)).toEqual(attempts);
    const synced = (await h.eventsOf(op)).filter((e) => e.type === 'io.capstan.sync.resource-synced.v1');
    expect(synced.map((e) => e.data.attempt)).toEqual(attempts);
  });

  it('given a failing sync being retried, when the Application changes, then the retry stops with a terminal failure that says why', async () => {
    await ensureNamespace(a.adminKubeconfig, 'retry-stop');
    await h.putApplication(app('changing', { retry }, 'retry-stop'));
    const op = await h.requestSync({ namespace: 'argocd', name: 'changing' }, { objects: [cm('never')] });
    await waitUntil(async () => (await retriesOf(op)) >= 1);
    await h.putApplication(app('changing', { retry: { ...retry, limit: 9 } }, 'retry-stop'));
    const terminal = await h.waitForTerminal(op);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toMatch(
      /^retry stopped: Application argocd\/changing changed since the failed attempt \(retried \d+ times\)\.$/,
    );
  });

  it('given a retry limit, when every attempt fails, then it stops after limit retries with Argo\'s "retried N times"', async () => {
    await ensureNamespace(a.adminKubeconfig, 'retry-limit');
    await h.putApplication(
      app('hopeless', { retry: { limit: 2, backoff: { duration: '1', maxDuration: '1s' } } }, 'retry-limit'),
    );
    const op = await h.requestSync({ namespace: 'argocd', name: 'hopeless' }, { objects: [cm('nope')] });
    const terminal = await h.waitForTerminal(op);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toMatch(/may not patch configmaps "nope".*\(retried 2 times\)\.$/);
    const attempts = (await h.eventsOf(op))
      .filter((e) => e.type === 'io.capstan.sync.started.v1')
      .map((e) => [e.data.attempt, (e.data.trigger as { kind: string }).kind]);
    expect(attempts).toEqual([
      [1, 'user'],
      [2, 'retry'],
      [3, 'retry'],
    ]);
  });
});
