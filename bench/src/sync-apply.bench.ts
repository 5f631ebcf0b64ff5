// Sync latency and throughput (issue 5), on a real kube-apiserver, real PostgreSQL and real NATS:
//  - latency: sync request published → terminal event received, for a 10-resource Application
//    (impersonation on), p50/p99 over sequential syncs. Goal p50 ≤ 150 ms.
//  - throughput: Applications synced per second with 50 requests in flight, side by side with a
//    bare server-side-apply loop of the same objects, as the same ServiceAccount, with the same
//    concurrency, against the same API server in the same run. Goal ≥ 0.8× the bare loop.
//  - where the time goes: CPU per Application of the API server and etcd, this database's
//    PostgreSQL backends, NATS and this process, during the sync rounds and the bare rounds. All of
//    them share the machine, so the throughput ratio follows the ratio of these totals.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Session } from 'node:inspector/promises';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import { KubernetesObjectApi, PatchStrategy, type KubeConfig } from '@kubernetes/client-node';
import {
  connectBus,
  newEvent,
  syncRequest,
  applicationCreated,
  syncFailed,
  syncSucceeded,
  clusterRegistered,
  projectCreated,
  type Bus,
} from '@capstan/events';
import { startService } from '@capstan/service';
import { startSync, syncSettings, type ManifestSource } from '@capstan/sync';
import { createTestBus, createTestDatabase } from '@capstan/test/infra';
import { seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { cpuMsOf, report, summarize, type Figure } from './harness.js';

const NAMESPACE = 'bench';
const SA = `system:serviceaccount:${NAMESPACE}:deployer`;
const RESOURCES = 10;
const IN_FLIGHT = 50;
const PARALLELISM = 16;
const ROUNDS = Number(process.env.SYNC_BENCH_ROUNDS ?? 5);

const objectsOf = (app: string, round: number) =>
  Array.from({ length: RESOURCES }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${app}-${i}`, namespace: NAMESPACE },
    data: { round: String(round), i: String(i) },
  }));

/**
 * Resolves when the terminal event of each operation id arrives (over core NATS, as any follower
 * would). Only the terminal subjects: this process also runs the sync service, whose event loop
 * should not pay for the harness reading every resource event.
 */
function terminalWatcher(bus: Bus) {
  const waiting = new Map<string, (status: string) => void>();
  const subs = [syncSucceeded, syncFailed].map((d) => bus.nc.subscribe(`${bus.namespace}.${d.subject}`));
  for (const sub of subs) {
    void (async () => {
      for await (const m of sub) {
        const e = JSON.parse(new TextDecoder().decode(m.data)) as {
          type: string;
          data: { operationId: string };
        };
        waiting.get(e.data.operationId)?.(e.type);
        waiting.delete(e.data.operationId);
      }
    })();
  }
  return {
    wait: (id: string) => new Promise<string>((resolve) => waiting.set(id, resolve)),
    stop: () => subs.forEach((s) => s.unsubscribe()),
  };
}

function cpuMeter(groups: Record<string, () => number>) {
  const take = () => Object.fromEntries(Object.entries(groups).map(([k, f]) => [k, f()]));
  return {
    /** Runs `work` and returns the CPU ms each group used per item of `items`. */
    async per<T>(items: number, work: () => Promise<T>): Promise<{ result: T; cpu: Record<string, number> }> {
      const before = take();
      const result = await work();
      const after = take();
      const cpu = Object.fromEntries(
        Object.keys(groups).map((k) => [k, Math.round(((after[k]! - before[k]!) / items) * 100) / 100]),
      );
      return { result, cpu };
    },
  };
}

/**
 * What each operation's Application renders to: the stand-in for the repo service's manifest
 * generation (requests carry no objects), so the figures are of the sync's own work.
 */
const staged = new Map<string, ReturnType<typeof objectsOf>>();
const stagedManifests: ManifestSource = {
  async render(_app, request) {
    const objects = staged.get(request.operationId);
    if (!objects) throw new Error(`no objects staged for ${request.operationId}`);
    return { revision: null, objects };
  },
};

async function request(bus: Bus, app: string, round: number): Promise<string> {
  const operationId = randomUUID();
  staged.set(operationId, objectsOf(app, round));
  await bus.publish(
    newEvent(
      syncRequest.type,
      {
        operationId,
        application: { namespace: 'argocd', name: app },
        dryRun: false,
        prune: false,
      },
      { subject: `applications/argocd/${app}`, actor: 'bench', source: 'capstan/bench' },
    ),
  );
  return operationId;
}

/**
 * The bare loop gets the same connection handling as the sync service (one keep-alive agent
 * instead of client-node's new TLS connection per request), so the comparison is of the sync's own
 * work, not of connection reuse.
 */
function keepAlive(kc: KubeConfig): KubeConfig {
  const target = kc as unknown as { createAgent: (cluster: unknown, options: AgentOptions) => unknown };
  let agent: HttpsAgent | undefined;
  target.createAgent = (_cluster, options) =>
    (agent ??= new HttpsAgent({ ...options, keepAlive: true, maxSockets: 32 }));
  return kc;
}

async function bareApplyLoop(
  cluster: KubeCluster,
  apps: string[],
  round: number,
  reuseConnections = true,
): Promise<number> {
  const kc = cluster.kubeconfigFor({ impersonate: SA });
  const api = KubernetesObjectApi.makeApiClient(reuseConnections ? keepAlive(kc) : kc);
  const queue = [...apps];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: PARALLELISM }, async () => {
      for (let app = queue.shift(); app !== undefined; app = queue.shift()) {
        for (const o of objectsOf(app, round))
          await api.patch(o, undefined, undefined, 'capstan-bench', true, PatchStrategy.ServerSideApply);
      }
    }),
  );
  return apps.length / ((performance.now() - start) / 1000);
}

export async function main(): Promise<void> {
  const loadAverageAtStart = loadavg();
  const cluster = await startCluster({ name: 'bench-sync', log: () => {} });
  const database = await createTestDatabase('capstan_bench_sync');
  const testBus = await createTestBus('bsync');
  const rules = [
    {
      apiGroups: [''],
      resources: ['configmaps'],
      verbs: ['get', 'list', 'create', 'patch', 'update', 'delete'],
    },
  ];
  await seedTenant(cluster.adminKubeconfig, { namespace: NAMESPACE, serviceAccounts: ['deployer'], rules });
  const service = await startService({
    name: 'sync',
    settings: syncSettings,
    sources: {
      argv: ['--enable-impersonation', `--sync-parallelism=${PARALLELISM}`],
      env: {
        DATABASE_URL: database.url,
        ...testBus.env('sync'),
        // SYNC_BENCH_LOG_LEVEL=info prints each sync's phase timings (the success log line).
        CAPSTAN_LOG_LEVEL: process.env.SYNC_BENCH_LOG_LEVEL ?? 'error',
      },
    },
    start: async (ctx) => {
      await startSync(ctx, {
        manifests: stagedManifests,
        // The workload has no argoproj.io objects: nothing is ever handed to the api.
        delivery: {
          deliver: () => Promise.reject(new Error('the sync benchmark delivers no control-plane objects')),
        },
        credentials: {
          get: async (ref) => ({
            name: ref.name,
            server: cluster.server,
            bearerToken: cluster.controlPlaneToken,
            caData: cluster.caPem,
          }),
        },
      });
    },
  });
  // The harness plays the api and watches the terminal events: as the operator's admin bus user.
  const bus = await connectBus({ ...testBus.connection('admin'), service: 'bench' });
  const meta = (subject: string) => ({ subject, actor: 'bench', source: 'capstan/api' });
  const watcher = terminalWatcher(bus);
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
        destinationServiceAccounts: [
          ...Array.from({ length: 9 }, (_, i) => ({
            server: '*',
            namespace: `other-${i}`,
            defaultServiceAccount: 'x',
          })),
          { server: '*', namespace: NAMESPACE, defaultServiceAccount: 'deployer' },
        ],
      },
    };
    await bus.publish(newEvent(projectCreated.type, { project, uid: 'p' }, meta('projects/bench')));
    const apps = ['latency', ...Array.from({ length: IN_FLIGHT }, (_, i) => `app-${i}`)];
    for (const name of apps) {
      const app = {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { name, namespace: 'argocd' },
        spec: {
          project: 'bench',
          source: { repoURL: 'https://git.example.com/bench.git', path: name },
          destination: { server: cluster.server, namespace: NAMESPACE },
        },
      };
      await bus.publish(
        newEvent(
          applicationCreated.type,
          { application: app, uid: name },
          meta(`applications/argocd/${name}`),
        ),
      );
    }
    // Wait until the read model has them all: the first sync of each must succeed.
    for (let round = 0; ; round++) {
      const id = await request(bus, 'app-49', 0);
      if ((await watcher.wait(id)).endsWith('succeeded.v1')) break;
      if (round > 100) throw new Error('the read model never caught up');
      await new Promise((r) => setTimeout(r, 100));
    }

    const latencies: number[] = [];
    for (let i = 0; i < 40; i++) {
      const start = performance.now();
      const id = await request(bus, 'latency', i);
      const type = await watcher.wait(id);
      if (!type.endsWith('succeeded.v1')) throw new Error(`latency sync ${i} failed`);
      if (i >= 5) latencies.push(performance.now() - start); // the first few warm the JIT and the pools
    }
    const lat = summarize(latencies);

    const selfCpu = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const meter = cpuMeter({
      apiServerAndEtcd: () => cpuMsOf((c) => c.includes(cluster.dir)),
      postgresBackends: () => cpuMsOf((c) => c.startsWith('postgres: ') && c.includes(database.name)),
      natsServerShared: () => cpuMsOf((c) => c.includes('nats-server')),
      thisProcess: selfCpu,
    });
    const syncRates: number[] = [];
    const bareRates: number[] = [];
    const bareDefaultRates: number[] = [];
    const syncCpu: Record<string, number>[] = [];
    const bareCpu: Record<string, number>[] = [];
    // SYNC_BENCH_PROFILE=file.cpuprofile: a CPU profile of this process during the sync rounds only.
    const profiler = process.env.SYNC_BENCH_PROFILE ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
    }
    for (let round = 1; round <= ROUNDS; round++) {
      await profiler?.post('Profiler.start');
      const start = performance.now();
      const { cpu } = await meter.per(IN_FLIGHT, async () => {
        const ids = await Promise.all(apps.slice(1).map((app) => request(bus, app, round)));
        const results = await Promise.all(ids.map((id) => watcher.wait(id)));
        if (results.some((t) => !t.endsWith('succeeded.v1'))) throw new Error('a throughput sync failed');
      });
      syncRates.push(IN_FLIGHT / ((performance.now() - start) / 1000));
      syncCpu.push(cpu);
      if (profiler) {
        const { profile } = await profiler.post('Profiler.stop');
        writeFileSync(`${process.env.SYNC_BENCH_PROFILE}.${round}`, JSON.stringify(profile));
      }
      const bare = await meter.per(IN_FLIGHT, () => bareApplyLoop(cluster, apps.slice(1), round + 100));
      bareRates.push(bare.result);
      bareCpu.push(bare.cpu);
      bareDefaultRates.push(await bareApplyLoop(cluster, apps.slice(1), round + 200, false));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const sync = median(syncRates);
    const bare = median(bareRates);
    const bareDefault = median(bareDefaultRates);
    // Everything runs on one machine, so the ratio follows the CPU each Application costs in all
    // the processes involved: the figures below say where it goes.
    const cpuTotal = (rows: Record<string, number>[]) =>
      median(rows.map((r) => Object.values(r).reduce((a, b) => a + b, 0)));
    const syncCpuMs = cpuTotal(syncCpu);
    const bareCpuMs = cpuTotal(bareCpu);
    const figures: Figure[] = [
      {
        name: 'sync latency p50, 10 resources (request → terminal event)',
        value: lat.p50,
        unit: 'ms',
        goal: '≤ 150',
        met: lat.p50 <= 150,
      },
      { name: 'sync latency p99, 10 resources', value: lat.p99, unit: 'ms' },
      { name: `Applications synced/s, ${IN_FLIGHT} in flight`, value: sync, unit: 'apps/s' },
      {
        name: `bare server-side apply loop, same objects, ${PARALLELISM} concurrent`,
        value: bare,
        unit: 'apps/s',
      },
      { name: 'sync / bare apply', value: sync / bare, unit: '×', goal: '≥ 0.8', met: sync / bare >= 0.8 },
      {
        name: `bare loop with client-node's default connections (new TLS per request)`,
        value: bareDefault,
        unit: 'apps/s',
      },
      { name: 'sync / that bare loop', value: sync / bareDefault, unit: '×' },
      {
        name: 'CPU per Application, sync (API server+etcd, PostgreSQL, NATS, this process)',
        value: syncCpuMs,
        unit: 'ms',
      },
      { name: 'CPU per Application, bare keep-alive loop (same processes)', value: bareCpuMs, unit: 'ms' },
      { name: 'bare CPU / sync CPU', value: bareCpuMs / syncCpuMs, unit: '×' },
    ];
    report('sync-apply', figures, {
      resourcesPerApplication: RESOURCES,
      inFlight: IN_FLIGHT,
      parallelism: PARALLELISM,
      identity: SA,
      rounds: { sync: syncRates, bare: bareRates, bareDefaultConnections: bareDefaultRates },
      cpuMsPerApplication: { sync: syncCpu, bare: bareCpu },
      loadAverageAtStart,
      loadAverageAtEnd: loadavg(),
      latencySamples: lat.n,
    });
    const table = (rows: Record<string, number>[]) =>
      Object.keys(rows[0] ?? {})
        .map((k) => `${k} ${median(rows.map((r) => r[k]!))}`)
        .join(', ');
    process.stdout.write(
      `CPU ms per Application by process (median of rounds)\n  sync: ${table(syncCpu)}\n  bare: ${table(bareCpu)}\n`,
    );
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
