// Reconciliation figures (issue 13), on a real kube-apiserver, real PostgreSQL and real NATS, with
// the sync service in this process and impersonation on:
//  - a full pass over 1,000 Applications × 10 resources with no change (desired state re-rendered
//    from a stand-in manifest source, compared with the informers' caches): wall time (goal ≤ 10 s)
//    and CPU per Application reconcile (this process, the API server and etcd, PostgreSQL);
//  - a compare-only pass (what a watch event costs, for every Application at once);
//  - watch-to-OutOfSync: an admin's edit (another field manager) → the sync.status-changed event
//    on the bus, over 50 edits (goal p99 ≤ 2 s);
//  - memory per 1,000 watched objects (heap after GC, with and without the Applications);
//  - the same comparison as a plain list-and-diff loop: every namespace listed as its
//    ServiceAccount each pass, then compared, in the same run.
import { Agent as HttpsAgent, request, type AgentOptions, type RequestOptions } from 'node:https';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadavg } from 'node:os';
import {
  KubernetesObjectApi,
  PatchStrategy,
  CoreV1Api,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { compareResource, compileIgnoreDifferences } from '@capstan/diff';
import { createHealthAssessor, worstHealth, type HealthStatusCode } from '@capstan/health';
import {
  applicationCreated,
  clusterRegistered,
  connectBus,
  newEvent,
  projectCreated,
  syncStatusChanged,
  type Bus,
} from '@capstan/events';
import { startService } from '@capstan/service';
import { startSync, syncSettings, type ManifestSource, type RunningReconciler } from '@capstan/sync';
import { createTestBus, createTestDatabase } from '@capstan/test/infra';
import { seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { cpuMsOf, report, summarize, type Figure } from './harness.js';

const APPS = Number(process.env.RECONCILE_BENCH_APPS ?? 1000);
const RESOURCES = 10;
const NAMESPACES = 10;
const EDITS = 50;
const REVISION = 'be9c'.padEnd(40, '0');
const TRACKING = 'argocd.argoproj.io/tracking-id';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const appName = (i: number) => `app-${i}`;
const nsOf = (i: number) => `t${i % NAMESPACES}`;
const saOf = (ns: string) => `system:serviceaccount:${ns}:deployer`;

/** What Application i declares (ConfigMaps of a realistic size), as a sync applies it. */
function objectsOf(i: number, tracked: boolean) {
  const app = appName(i);
  const namespace = nsOf(i);
  return Array.from({ length: RESOURCES }, (_, j) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `${app}-${j}`,
      namespace,
      ...(tracked ? { annotations: { [TRACKING]: `${app}:/ConfigMap:${namespace}/${app}-${j}` } } : {}),
    },
    data: {
      app,
      index: String(j),
      'settings.yaml': `replicas: 2\nimage: example/${app}:1.0\n${'# comment\n'.repeat(20)}`,
    },
  }));
}

function keepAlive(kc: KubeConfig): KubeConfig {
  const target = kc as unknown as { createAgent: (cluster: unknown, options: AgentOptions) => unknown };
  let agent: HttpsAgent | undefined;
  target.createAgent = (_c, options) =>
    (agent ??= new HttpsAgent({ ...options, keepAlive: true, maxSockets: 32 }));
  return kc;
}

/** The objects applied as each namespace's ServiceAccount with the sync's field manager (what a sync leaves). */
async function seedObjects(cluster: KubeCluster): Promise<void> {
  const apis = new Map<string, KubernetesObjectApi>();
  for (let n = 0; n < NAMESPACES; n++)
    apis.set(
      `t${n}`,
      KubernetesObjectApi.makeApiClient(keepAlive(cluster.kubeconfigFor({ impersonate: saOf(`t${n}`) }))),
    );
  const queue = Array.from({ length: APPS }, (_, i) => i);
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift())
        for (const o of objectsOf(i, true))
          await apis
            .get(nsOf(i))!
            .patch(o, undefined, undefined, 'capstan', true, PatchStrategy.ServerSideApply);
    }),
  );
}

/** Watches sync.status-changed on the bus: resolves when `app` reaches `status`. */
function statusWatcher(bus: Bus) {
  const waiting = new Map<string, { status: string; resolve: () => void }>();
  const sub = bus.nc.subscribe(`${bus.namespace}.${syncStatusChanged.subject}`);
  void (async () => {
    for await (const m of sub) {
      const e = JSON.parse(new TextDecoder().decode(m.data)) as {
        data: { application: { name: string }; sync: { status: string } };
      };
      const w = waiting.get(e.data.application.name);
      if (w && w.status === e.data.sync.status) {
        waiting.delete(e.data.application.name);
        w.resolve();
      }
    }
  })();
  return {
    until: (app: string, status: string) =>
      new Promise<void>((resolve) => waiting.set(app, { status, resolve })),
    stop: () => sub.unsubscribe(),
  };
}

/** One page-by-page list of a namespace's ConfigMaps as JSON, through the given KubeConfig. */
async function listConfigMaps(kc: KubeConfig, namespace: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let next = '';
  do {
    const url = new URL(`${kc.getCurrentCluster()!.server}/api/v1/namespaces/${namespace}/configmaps`);
    url.searchParams.set('limit', '500');
    if (next) url.searchParams.set('continue', next);
    const options: RequestOptions = { method: 'GET' };
    await kc.applyToHTTPSOptions(options);
    const page = await new Promise<{ items: Record<string, unknown>[]; metadata: { continue?: string } }>(
      (resolve, reject) => {
        const req = request(url, options, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      },
    );
    // Items of a list carry no apiVersion and kind.
    for (const item of page.items) items.push({ apiVersion: 'v1', kind: 'ConfigMap', ...item });
    next = page.metadata.continue ?? '';
  } while (next);
  return items;
}

/** The plain loop: list every namespace as its ServiceAccount, compare every Application. */
async function listAndDiffPass(cluster: KubeCluster, kcs: Map<string, KubeConfig>): Promise<number> {
  const ignore = await compileIgnoreDifferences([]);
  const health = await createHealthAssessor();
  let outOfSync = 0;
  const live = new Map<string, Map<string, Record<string, unknown>>>();
  for (const [ns, kc] of kcs)
    live.set(
      ns,
      new Map((await listConfigMaps(kc, ns)).map((o) => [(o.metadata as { name: string }).name, o])),
    );
  for (let i = 0; i < APPS; i++) {
    const codes: HealthStatusCode[] = [];
    let synced = true;
    for (const d of objectsOf(i, true)) {
      const l = live.get(nsOf(i))!.get(d.metadata.name);
      if (compareResource(d, l, { ignore, fieldManager: 'capstan' }).status !== 'Synced') synced = false;
      codes.push(health.assess(l)?.status ?? 'Healthy');
    }
    worstHealth(codes);
    if (!synced) outOfSync++;
  }
  void cluster;
  return outOfSync;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

export async function main(): Promise<void> {
  const loadAverageAtStart = loadavg();
  const cluster = await startCluster({ name: 'bench-reconcile', log: () => {} });
  const database = await createTestDatabase('capstan_bench_reconcile');
  const testBus = await createTestBus('brec');
  const rules = [
    {
      apiGroups: [''],
      resources: ['configmaps'],
      verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
    },
  ];
  for (let n = 0; n < NAMESPACES; n++)
    await seedTenant(cluster.adminKubeconfig, { namespace: `t${n}`, serviceAccounts: ['deployer'], rules });
  const seedStart = performance.now();
  await seedObjects(cluster);
  process.stdout.write(
    `seeded ${APPS * RESOURCES} objects in ${Math.round(performance.now() - seedStart)} ms\n`,
  );

  const manifests: ManifestSource = {
    async render(app) {
      return { revision: REVISION, objects: objectsOf(Number(app.metadata.name.slice(4)), false) };
    },
  };
  let reconciler: RunningReconciler | undefined;
  const service = await startService({
    name: 'sync',
    settings: syncSettings,
    sources: {
      argv: ['--enable-impersonation'],
      env: { DATABASE_URL: database.url, ...testBus.env('sync'), CAPSTAN_LOG_LEVEL: 'error' },
    },
    start: async (ctx) => {
      reconciler = (
        await startSync(ctx, {
          manifests,
          delivery: { deliver: () => Promise.reject(new Error('nothing is delivered')) },
          credentials: {
            get: async (ref) => ({
              name: ref.name,
              server: cluster.server,
              bearerToken: cluster.controlPlaneToken,
              caData: cluster.caPem,
            }),
          },
        })
      ).reconciler;
    },
  });
  const rec = reconciler!.reconciler;
  const bus = await connectBus({ ...testBus.connection('admin'), service: 'bench' });
  const watcher = statusWatcher(bus);
  const meta = (subject: string) => ({ subject, actor: 'bench', source: 'capstan/api' });
  const core = cluster.adminKubeconfig.makeApiClient(CoreV1Api);
  const processCpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const cpu = () => ({
    process: processCpu(),
    apiServerAndEtcd: cpuMsOf((c) => c.includes(cluster.dir)),
    postgres: cpuMsOf((c) => c.startsWith('postgres: ') && c.includes(database.name)),
  });
  const perApp = (a: ReturnType<typeof cpu>, b: ReturnType<typeof cpu>) =>
    Object.fromEntries(
      Object.keys(a).map((k) => [k, Math.round((((b as never)[k] - (a as never)[k]) / APPS) * 1000) / 1000]),
    );
  try {
    await bus.publish(
      newEvent(
        clusterRegistered.type,
        {
          cluster: {
            name: 'bench',
            server: cluster.server,
            namespaces: [],
            labels: {},
            credentialType: 'bearer',
            keyId: 'k',
            insecure: false,
            serverName: '',
            hasCaData: true,
          },
          uid: 'c',
        },
        meta('clusters/bench'),
      ),
    );
    const project = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AppProject',
      metadata: { name: 'bench', namespace: 'argocd' },
      spec: {
        sourceRepos: ['*'],
        destinations: [{ server: '*', namespace: '*' }],
        destinationServiceAccounts: [{ server: '*', namespace: 't*', defaultServiceAccount: 'deployer' }],
      },
    };
    await bus.publish(newEvent(projectCreated.type, { project, uid: 'p' }, meta('projects/bench')));
    await sleep(500);
    const heapBefore = heapAfterGc();
    const coldStart = performance.now();
    for (let i = 0; i < APPS; i++) {
      const app = {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { name: appName(i), namespace: 'argocd' },
        spec: {
          project: 'bench',
          source: { repoURL: 'https://git.example.com/bench.git', path: appName(i), targetRevision: 'main' },
          destination: { server: cluster.server, namespace: nsOf(i) },
        },
      };
      await bus.publish(
        newEvent(
          applicationCreated.type,
          { application: app, uid: appName(i) },
          meta(`applications/argocd/${appName(i)}`),
        ),
      );
    }
    await until(() => rec.stats().synced === APPS, 600_000, 'every Application Synced');
    const coldMs = performance.now() - coldStart;
    await until(() => rec.idle(), 60_000, 'idle');
    const stats = rec.stats();
    const heapAfter = heapAfterGc();

    // Full passes (desired state re-rendered and compared), then compare-only passes: no change.
    const fullPasses: number[] = [];
    const fullCpu: Record<string, number>[] = [];
    for (let round = 0; round < 3; round++) {
      const before = cpu();
      const start = performance.now();
      rec.resyncAll();
      await until(() => rec.idle(), 120_000, 'full pass');
      fullPasses.push(performance.now() - start);
      fullCpu.push(perApp(before, cpu()));
    }
    const comparePasses: number[] = [];
    for (let round = 0; round < 3; round++) {
      const start = performance.now();
      rec.compareAll();
      await until(() => rec.idle(), 60_000, 'compare pass');
      comparePasses.push(performance.now() - start);
    }

    // Watch to OutOfSync: an admin's edit, then the status event on the bus; put back between edits.
    const latencies: number[] = [];
    for (let k = 0; k < EDITS; k++) {
      const i = (k * 37) % APPS;
      const name = `${appName(i)}-0`;
      const outOfSync = watcher.until(appName(i), 'OutOfSync');
      const start = performance.now();
      await core.patchNamespacedConfigMap(
        { namespace: nsOf(i), name, body: { data: { index: `edited ${k}` } }, fieldManager: 'kubectl-edit' },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await outOfSync;
      latencies.push(performance.now() - start);
      const synced = watcher.until(appName(i), 'Synced');
      await core.patchNamespacedConfigMap(
        { namespace: nsOf(i), name, body: { data: { index: '0' } }, fieldManager: 'kubectl-edit' },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await synced;
    }
    const lat = summarize(latencies);

    // The plain loop, same objects, same identities, same run.
    const kcs = new Map<string, KubeConfig>();
    for (let n = 0; n < NAMESPACES; n++)
      kcs.set(`t${n}`, keepAlive(cluster.kubeconfigFor({ impersonate: saOf(`t${n}`) })));
    const loopPasses: number[] = [];
    const loopCpu: Record<string, number>[] = [];
    for (let round = 0; round < 3; round++) {
      const before = cpu();
      const start = performance.now();
      const outOfSync = await listAndDiffPass(cluster, kcs);
      if (outOfSync !== 0) throw new Error(`list-and-diff found ${outOfSync} Applications OutOfSync`);
      loopPasses.push(performance.now() - start);
      loopCpu.push(perApp(before, cpu()));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
    const fullMs = median(fullPasses);
    const fullCpuMs = median(fullCpu.map(total));
    const loopCpuMs = median(loopCpu.map(total));
    const perThousand = ((heapAfter - heapBefore) / stats.objects) * 1000;
    const figures: Figure[] = [
      {
        name: `full pass, ${APPS} Applications × ${RESOURCES} resources, no change`,
        value: fullMs,
        unit: 'ms',
        goal: '≤ 10000',
        met: fullMs <= 10_000,
      },
      {
        name: 'CPU per Application reconcile, full pass (this process + API server/etcd + PostgreSQL)',
        value: fullCpuMs,
        unit: 'ms',
      },
      {
        name: 'compare-only pass, every Application from the caches',
        value: median(comparePasses),
        unit: 'ms',
      },
      {
        name: `watch-to-OutOfSync p50 (${EDITS} edits, edit → status-changed on the bus)`,
        value: lat.p50,
        unit: 'ms',
      },
      { name: 'watch-to-OutOfSync p99', value: lat.p99, unit: 'ms', goal: '≤ 2000', met: lat.p99 <= 2_000 },
      {
        name: 'heap per 1,000 watched objects (informer caches, desired state, indexes)',
        value: perThousand / 2 ** 20,
        unit: 'MiB',
      },
      {
        name: 'list-and-diff loop, same comparison, every namespace listed as its ServiceAccount',
        value: median(loopPasses),
        unit: 'ms',
      },
      { name: 'CPU per Application, list-and-diff loop (same processes)', value: loopCpuMs, unit: 'ms' },
      { name: 'cold start: Applications created → all Synced (lists, renders)', value: coldMs, unit: 'ms' },
    ];
    report('reconcile', figures, {
      applications: APPS,
      resourcesPerApplication: RESOURCES,
      namespaces: NAMESPACES,
      informers: stats.informers,
      watchedObjects: stats.objects,
      identity: 'one ServiceAccount per namespace (impersonated), 10 namespaces',
      passes: { full: fullPasses, compareOnly: comparePasses, listAndDiff: loopPasses },
      cpuMsPerApplication: { full: fullCpu, listAndDiff: loopCpu },
      heapBytes: { before: heapBefore, after: heapAfter },
      loadAverageAtStart,
      loadAverageAtEnd: loadavg(),
      note: 'everything (API server, etcd, PostgreSQL, NATS, the sync service and the loop) shares the 2-core machine; the full pass re-renders from an in-process stand-in of the repo service (a real repo service answers from its cache by revision) and reads the read model once per Application',
    });
  } finally {
    watcher.stop();
    await bus.close();
    await service.stop();
    await testBus.cleanup();
    await database.drop();
    await cluster.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
