// The reconciler on real infrastructure — PostgreSQL, NATS JetStream and a real kube-apiserver:
// live state read by informers as the Application's resolved ServiceAccount (the API server's audit
// log says so), a hand edit turning the Application OutOfSync, a watch the ServiceAccount may not do
// reported as Unknown naming the identity and verb, and automation: a new automated Application
// synced without any push, self-heal putting an edit back, and without selfHeal the edit staying.
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStream } from '@capstan/events';
import { effectiveUser, seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { startSyncHarness, waitUntil, type SyncHarness } from '../test-support/harness.js';
import { application, cm, project } from '../test-support/fixtures.js';
import type { KubeObject, ManifestSource } from '../manifests/manifest-source.js';
import { statusStream } from './status.repository.js';

const REVISION = 'f00d'.padEnd(40, '0');
const WATCHER = 'system:serviceaccount:live:deployer';

/** What each Application's source renders to (the repo service's stand-in), at REVISION. */
const sources = new Map<string, KubeObject[]>();
const manifests: ManifestSource = {
  async render(app) {
    return { revision: REVISION, objects: sources.get(app.metadata.name) ?? [] };
  },
};

let cluster: KubeCluster;
let h: SyncHarness;
let core: CoreV1Api;

interface StatusData {
  sync: { status: string; revision?: string };
  health: { status: string };
  message?: string;
  resources: { name: string; status: string; requiresPruning?: boolean }[];
  previous?: { sync: string };
}

const statuses = async (name: string): Promise<StatusData[]> =>
  (await readStream(h.db, 'sync', statusStream({ namespace: 'argocd', name }))).map(
    (e) => e.envelope.data as StatusData,
  );
const latest = async (name: string) => (await statuses(name)).at(-1);
const waitForStatus = async (name: string, check: (s: StatusData) => boolean, timeoutMs = 30_000) => {
  await waitUntil(async () => {
    const s = await latest(name);
    return s !== undefined && check(s);
  }, timeoutMs);
  return (await latest(name))!;
};
const operationsOf = async (name: string) =>
  h.db
    .withSchema('sync')
    .selectFrom('operations')
    .select(['operation_id', 'status', 'request', 'actor'])
    .where('app_name', '=', name)
    .orderBy('created_at')
    .execute();

/** An admin's kubectl-style edit: a server-side apply under another field manager. */
const adminEdit = (namespace: string, name: string, data: Record<string, string>) =>
  core.patchNamespacedConfigMap(
    {
      namespace,
      name,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data },
      fieldManager: 'kubectl-edit',
      force: true,
    },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
  );

beforeAll(async () => {
  cluster = await startCluster({ name: 'reconcile', log: () => {} });
  core = cluster.adminKubeconfig.makeApiClient(CoreV1Api);
  const rw = {
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
  };
  await seedTenant(cluster.adminKubeconfig, {
    namespace: 'live',
    serviceAccounts: ['deployer'],
    rules: [rw],
  });
  // This one may list but not watch.
  await seedTenant(cluster.adminKubeconfig, {
    namespace: 'blind',
    serviceAccounts: ['deployer'],
    rules: [{ ...rw, verbs: ['get', 'list', 'create', 'patch', 'update', 'delete'] }],
  });
  h = await startSyncHarness([cluster], { impersonation: true, manifests });
  await h.registerCluster(cluster, 'reconcile');
  await h.putProject(
    project('team-a', {
      destinations: [{ server: '*', namespace: '*' }],
      destinationServiceAccounts: [{ server: '*', namespace: '*', defaultServiceAccount: 'deployer' }],
    }),
  );
}, 240_000);

afterAll(async () => {
  await h?.stop();
  await cluster?.stop();
});

describe('reconciliation through watches, as the ServiceAccount', () => {
  it('given a synced Application, when an admin edits its ConfigMap, then the informer (as the ServiceAccount) sees it and the Application turns OutOfSync', async () => {
    const since = await cluster.audit.mark();
    sources.set('watched', [cm('watched-1'), cm('watched-2')]);
    await h.putApplication(application('watched', 'team-a', { server: cluster.server, namespace: 'live' }));
    // Not synced yet: both declared objects are missing.
    const before = await waitForStatus('watched', (s) => s.sync.status === 'OutOfSync');
    expect(before).toMatchObject({ sync: { revision: REVISION }, health: { status: 'Missing' } });
    const op = await h.requestSync({ namespace: 'argocd', name: 'watched' });
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    const synced = await waitForStatus('watched', (s) => s.sync.status === 'Synced');
    expect(synced).toMatchObject({ health: { status: 'Healthy' }, previous: { sync: 'OutOfSync' } });
    expect(synced.resources.map((r) => [r.name, r.status])).toEqual([
      ['watched-1', 'Synced'],
      ['watched-2', 'Synced'],
    ]);

    await adminEdit('live', 'watched-2', { key: 'edited by hand' });
    const drifted = await waitForStatus('watched', (s) => s.sync.status === 'OutOfSync');
    expect(drifted.resources.map((r) => [r.name, r.status])).toEqual([
      ['watched-1', 'Synced'],
      ['watched-2', 'OutOfSync'],
    ]);
    // Not automated: nothing syncs it back.
    expect((await operationsOf('watched')).map((o) => o.operation_id)).toEqual([op]);

    // Every list and watch of the reconciler ran as the ServiceAccount.
    const reads = (await cluster.audit.flush({ since })).filter(
      (e) =>
        (e.verb === 'list' || e.verb === 'watch') &&
        e.objectRef?.resource === 'configmaps' &&
        e.objectRef?.namespace === 'live',
    );
    expect(new Set(reads.map((e) => e.verb))).toEqual(new Set(['list', 'watch']));
    expect(new Set(reads.map(effectiveUser))).toEqual(new Set([WATCHER]));
  });

  it('given a ServiceAccount that may list but not watch, when reconciled, then the Application is Unknown with a message naming the identity and the verb, never read as the control plane', async () => {
    const since = await cluster.audit.mark();
    sources.set('blind', [cm('blind-1')]);
    await h.putApplication(application('blind', 'team-a', { server: cluster.server, namespace: 'blind' }));
    const status = await waitForStatus('blind', (s) => s.sync.status === 'Unknown');
    expect(status.health.status).toBe('Unknown');
    expect(status.message).toMatch(
      /^system:serviceaccount:blind:deployer may not watch configmaps in namespace "blind"/,
    );
    // Retried with backoff as the same identity, and the verdict does not flap meanwhile (a list
    // that succeeds before the refused watch is not a moment of truth).
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await statuses('blind')).map((s) => s.sync.status)).toEqual(['Unknown']);
    const reads = (await cluster.audit.flush({ since })).filter(
      (e) => e.objectRef?.resource === 'configmaps' && e.objectRef?.namespace === 'blind',
    );
    expect(reads.filter((e) => e.verb === 'watch').length).toBeGreaterThan(1);
    expect(reads.length).toBeGreaterThan(0);
    expect(new Set(reads.map(effectiveUser))).toEqual(new Set(['system:serviceaccount:blind:deployer']));
  });
});

describe('automation', () => {
  it('given a new Application with syncPolicy.automated, when created, then it is synced without any push, as its ServiceAccount, marked automated', async () => {
    sources.set('auto', [cm('auto-1')]);
    await h.putApplication(
      application(
        'auto',
        'team-a',
        { server: cluster.server, namespace: 'live' },
        { syncPolicy: { automated: {} } },
      ),
    );
    await waitForStatus('auto', (s) => s.sync.status === 'Synced');
    // The watch can report the object before the operation that wrote it is on record as finished.
    let ops = await operationsOf('auto');
    for (let i = 0; i < 100 && ops[0]?.status !== 'succeeded'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      ops = await operationsOf('auto');
    }
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatchObject({
      status: 'succeeded',
      actor: 'automation',
      request: { revision: REVISION, automated: true, trigger: { kind: 'automated', actor: 'automation' } },
    });
    const done = (await h.eventsOf(ops[0]!.operation_id)).at(-1)!;
    expect(done.data).toMatchObject({ identity: { username: WATCHER } });
  });

  it('given selfHeal, when an admin edits a synced object, then it is put back by a self-heal sync', async () => {
    sources.set('healed', [cm('healed-1')]);
    await h.putApplication(
      application(
        'healed',
        'team-a',
        { server: cluster.server, namespace: 'live' },
        { syncPolicy: { automated: { selfHeal: true } } },
      ),
    );
    await waitForStatus('healed', (s) => s.sync.status === 'Synced');
    await adminEdit('live', 'healed-1', { key: 'edited by hand' });
    await waitUntil(async () =>
      (await operationsOf('healed')).some((o) => o.operation_id.startsWith('heal:')),
    );
    await waitUntil(async () => {
      const live = await core.readNamespacedConfigMap({ namespace: 'live', name: 'healed-1' });
      return live.data?.key === 'healed-1';
    });
    const heal = (await operationsOf('healed')).find((o) => o.operation_id.startsWith('heal:'))!;
    expect(heal.request).toMatchObject({
      trigger: { kind: 'self-heal', actor: 'automation' },
      selfHealAttempts: 1,
    });
    const seen = (await statuses('healed')).map((s) => s.sync.status);
    expect(seen).toContain('OutOfSync');
    await waitForStatus('healed', (s) => s.sync.status === 'Synced');
  });

  it('given automation without selfHeal, when an admin edits a synced object, then it stays OutOfSync and is not synced again', async () => {
    sources.set('kept', [cm('kept-1')]);
    await h.putApplication(
      application(
        'kept',
        'team-a',
        { server: cluster.server, namespace: 'live' },
        { syncPolicy: { automated: {} } },
      ),
    );
    await waitForStatus('kept', (s) => s.sync.status === 'Synced');
    await adminEdit('live', 'kept-1', { key: 'edited by hand' });
    await waitForStatus('kept', (s) => s.sync.status === 'OutOfSync');
    // Long enough for a self-heal to have been queued at once, were it on.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await operationsOf('kept')).toHaveLength(1);
    const live = await core.readNamespacedConfigMap({ namespace: 'live', name: 'kept-1' });
    expect(live.data?.key).toBe('edited by hand');
  });
});

describe("argocd-cm's resource.exclusions in the reconciler", () => {
  it('given an excluded kind, when reconciled, then it is not compared and the verdict says so (ExcludedResourceWarning); lifted, it is compared again without a restart', async () => {
    sources.set('excluder', [cm('excluded-1')]);
    await h.applySettings('argocd-cm', 1, {
      'resource.exclusions': `- kinds: [ConfigMap]\n  clusters: ['${cluster.server}']\n`,
    });
    await h.putApplication(application('excluder', 'team-a', { server: cluster.server, namespace: 'live' }));
    const excluded = (await waitForStatus('excluder', (s) => s.sync.status === 'Synced')) as StatusData & {
      excluded?: string[];
    };
    expect(excluded.resources).toEqual([]);
    expect(excluded.excluded).toEqual(['Resource /ConfigMap excluded-1 is excluded in the settings']);
    await h.applySettings('argocd-cm', 2, {});
    const compared = (await waitForStatus('excluder', (s) => s.sync.status === 'OutOfSync')) as StatusData & {
      excluded?: string[];
    };
    expect(compared.resources.map((r) => [r.name, r.status])).toEqual([['excluded-1', 'OutOfSync']]);
    expect(compared.excluded).toBeUndefined();
  });
});
