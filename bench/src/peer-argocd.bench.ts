// Capstan and Argo CD side by side (issue 17), in one run on the same kube-apiserver and git server,
// one system at a time (the other stopped), each writing to its own 10 namespaces:
//  1. N Applications × 10 resources (4 ConfigMaps, 3 Deployments, 3 Services) from git, created at
//     once with automated sync, until every one is Synced at main's commit with its last sync
//     operation Succeeded at that commit (Argo: .status.sync.status/.revision and
//     .status.operationState.phase/.syncResult.revision). Sync, not health: there is no kubelet, so
//     Deployments never become available in either system.
//  2. One commit changing one line in every Application's directory, announced by a signed GitHub
//     push delivery to each system's webhook (Capstan's api POST /api/webhook; Argo CD's argocd-server
//     /api/webhook), until every Application is Synced again at the new commit.
//  3. No change for 60 s (PEER_ARGOCD_STEADY_S): the CPU the system spends idle-watching.
// Figures per system: apps/s, time to done p50/p99 per Application (from the first create, from the
// delivery), CPU seconds and peak RSS of its own processes (Capstan: repo, api, sync; Argo CD:
// repo-server, application-controller, server, redis), and Capstan/Argo ratios. The shared
// kube-apiserver/etcd, git, NATS and PostgreSQL are not counted in either (their CPU is in the notes).
// Argo CD is built by test/scripts/obtain-argocd.sh (never in CI); redis-server is Debian's.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startGitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { startCluster, type KubeCluster } from '@capstan/test/kube';
import { cpuMsOf, report, summarize, type Figure } from './harness.js';
import { ARGO_SETTINGS, startArgo } from './peer-argocd-argo.js';
import { startCapstan } from './peer-argocd-capstan.js';
import {
  appPath,
  commitChange,
  commitWorkload,
  NAMESPACES,
  ProcessMeter,
  RESOURCES,
  Tracker,
  type PeerSystem,
} from './peer-argocd-workload.js';

const APPS = Number(process.env.PEER_ARGOCD_APPS ?? 20);
const STEADY_S = Number(process.env.PEER_ARGOCD_STEADY_S ?? 60);
const SETTLE_MS = 10_000;
const TIMEOUT_MS = Math.max(300_000, APPS * 5_000);
const SECRET = 'peer-argocd-webhook-secret';
const root = fileURLToPath(new URL('../..', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type SystemName = 'capstan' | 'argocd';

interface Env {
  cluster: KubeCluster;
  repo: TestRepository;
  db: TestDatabase;
  bus: TestBus;
  argoDir: string;
  cacheDir: string;
  version: number;
}

const namespaceOf = (system: SystemName) => (i: number) => `${system}-${i % NAMESPACES}`;

/** Argo CD's cache directory, or undefined when it is not built (`npm run bench:peer` builds it). */
function argoBinaries(): string | undefined {
  const script = join(root, 'test/scripts/obtain-argocd.sh');
  try {
    execFileSync('bash', [script, '--check'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  return execFileSync('bash', [script, '--print-dir'], { encoding: 'utf8' }).trim();
}

function start(system: SystemName, env: Env, tracker: Tracker): Promise<PeerSystem> {
  const common = { cluster: env.cluster, repoUrl: env.repo.url, webhookSecret: SECRET, tracker };
  return system === 'capstan'
    ? startCapstan({
        ...common,
        databaseUrl: env.db.url,
        bus: env.bus,
        cacheDir: env.cacheDir,
        namespace: namespaceOf(system),
      })
    : startArgo({ ...common, binDir: env.argoDir, namespace: namespaceOf(system) });
}

/** The three phases on one system; its processes stopped at the end. */
async function measure(system: SystemName, env: Env) {
  const tracker = new Tracker(APPS);
  const sys = await start(system, env, tracker);
  const meter = new ProcessMeter(() => sys.pids());
  const shared = () => ({
    apiServerAndEtcdMs: cpuMsOf((c) => c.includes(env.cluster.dir)),
    postgresMs: cpuMsOf((c) => c.startsWith('postgres: ') && c.includes(env.db.name)),
  });
  const delta = (a: ReturnType<typeof shared>, b: ReturnType<typeof shared>) => ({
    apiServerAndEtcdMs: b.apiServerAndEtcdMs - a.apiServerAndEtcdMs,
    postgresMs: b.postgresMs - a.postgresMs,
  });
  const describe = () => `${tracker.pending()}\n${sys.output()}`;
  try {
    const head = await env.repo.sha('main');
    // 1. Create every Application at once.
    let cpu = meter.read().cpuMs;
    let infra = shared();
    const t0 = performance.now();
    tracker.expect(head, t0);
    await sys.createApps(APPS);
    const createMs = performance.now() - t0;
    const initial = await tracker.all(TIMEOUT_MS, describe);
    const initialWallMs = Math.max(...initial);
    const initialCpuMs = meter.read().cpuMs - cpu;
    const initialShared = delta(infra, shared());
    await sleep(SETTLE_MS);

    // 2. A push, announced to the webhook.
    env.version += 1;
    const after = await commitChange(env.repo, APPS, env.version);
    const modified = Array.from({ length: APPS }, (_, i) => `${appPath(i)}/config-0.yaml`);
    cpu = meter.read().cpuMs;
    infra = shared();
    const t1 = performance.now();
    tracker.expect(after, t1);
    await sys.announcePush({ before: head, after, modified });
    const pushed = await tracker.all(TIMEOUT_MS, describe);
    const pushWallMs = Math.max(...pushed);
    const pushCpuMs = meter.read().cpuMs - cpu;
    const pushShared = delta(infra, shared());
    await sleep(SETTLE_MS);

    // 3. No change.
    const rest = meter.read();
    infra = shared();
    await sleep(STEADY_S * 1000);
    const rested = meter.read();
    const steadyCpuMs = rested.cpuMs - rest.cpuMs;
    const steadyShared = delta(infra, shared());
    const steadyByProcess = Object.fromEntries(
      Object.entries(rested.byProcess).map(([name, p]) => [
        name,
        p.cpuMs - (rest.byProcess[name]?.cpuMs ?? 0),
      ]),
    );
    const end = meter.read();
    return {
      createMs,
      initial: { wallMs: initialWallMs, ...summarize(initial), cpuMs: initialCpuMs, shared: initialShared },
      push: { wallMs: pushWallMs, ...summarize(pushed), cpuMs: pushCpuMs, shared: pushShared },
      steady: {
        seconds: STEADY_S,
        cpuMs: steadyCpuMs,
        cpuMsByProcess: steadyByProcess,
        shared: steadyShared,
      },
      peakRssMiB: end.peakRssMiB,
      processes: end.byProcess,
    };
  } finally {
    await sys.stop();
  }
}

/** Removes what a system applied, so the next one's caches start from the same cluster. */
async function clean(cluster: KubeCluster, system: SystemName): Promise<void> {
  const core = cluster.adminKubeconfig.makeApiClient(CoreV1Api);
  const apps = cluster.adminKubeconfig.makeApiClient(AppsV1Api);
  for (let n = 0; n < NAMESPACES; n++) {
    const namespace = namespaceOf(system)(n);
    await apps.deleteCollectionNamespacedDeployment({ namespace });
    await core.deleteCollectionNamespacedConfigMap({ namespace });
    await core.deleteCollectionNamespacedService({ namespace });
  }
}

type Result = Awaited<ReturnType<typeof measure>>;

function figuresOf(system: SystemName, r: Result): Figure[] {
  const label = system === 'capstan' ? 'Capstan' : 'Argo CD';
  return [
    {
      name: `${label}: create → all Synced, apps/s`,
      value: APPS / (r.initial.wallMs / 1000),
      unit: 'apps/s',
    },
    { name: `${label}: create → Synced p50`, value: r.initial.p50, unit: 'ms' },
    { name: `${label}: create → Synced p99`, value: r.initial.p99, unit: 'ms' },
    { name: `${label}: create → all Synced, CPU`, value: r.initial.cpuMs / 1000, unit: 's' },
    { name: `${label}: CPU per Application, create → Synced`, value: r.initial.cpuMs / APPS, unit: 'ms' },
    { name: `${label}: push → all Synced at the new commit`, value: r.push.wallMs, unit: 'ms' },
    { name: `${label}: push → Synced p50`, value: r.push.p50, unit: 'ms' },
    { name: `${label}: push → Synced p99`, value: r.push.p99, unit: 'ms' },
    { name: `${label}: push → all Synced, CPU`, value: r.push.cpuMs / 1000, unit: 's' },
    { name: `${label}: no change, CPU over ${STEADY_S} s`, value: r.steady.cpuMs / 1000, unit: 's' },
    ...Object.entries(r.steady.cpuMsByProcess).map(([name, ms]) => ({
      name: `${label}: no change, CPU over ${STEADY_S} s, ${name}`,
      value: ms / 1000,
      unit: 's',
    })),
    { name: `${label}: peak RSS (sum over its processes)`, value: r.peakRssMiB, unit: 'MiB' },
  ];
}

function ratios(c: Result, a: Result): Figure[] {
  const ratio = (x: number, y: number) => Math.round((x / y) * 1000) / 1000;
  const capstanRate = APPS / c.initial.wallMs;
  const argoRate = APPS / a.initial.wallMs;
  const cpuRatio = ratio(c.initial.cpuMs, a.initial.cpuMs);
  return [
    {
      name: 'Capstan/Argo apps/s',
      value: ratio(capstanRate, argoRate),
      unit: '×',
      goal: '≥ 2',
      met: capstanRate / argoRate >= 2,
    },
    {
      name: 'Capstan/Argo CPU per Application (create → Synced)',
      value: cpuRatio,
      unit: '×',
      goal: '≤ 0.5',
      met: cpuRatio <= 0.5,
    },
    { name: 'Capstan/Argo create → Synced p99', value: ratio(c.initial.p99, a.initial.p99), unit: '×' },
    {
      name: 'Capstan/Argo push → Synced p50',
      value: ratio(c.push.p50, a.push.p50),
      unit: '×',
      goal: '< 1',
      met: c.push.p50 < a.push.p50,
    },
    { name: 'Capstan/Argo push → Synced p99', value: ratio(c.push.p99, a.push.p99), unit: '×' },
    { name: 'Capstan/Argo push → all Synced, CPU', value: ratio(c.push.cpuMs, a.push.cpuMs), unit: '×' },
    { name: 'Capstan/Argo no-change CPU', value: ratio(c.steady.cpuMs, a.steady.cpuMs), unit: '×' },
    { name: 'Capstan/Argo peak RSS', value: ratio(c.peakRssMiB, a.peakRssMiB), unit: '×' },
  ];
}

export async function main(): Promise<void> {
  const order = (process.env.PEER_ARGOCD_ORDER ?? 'capstan,argocd').split(',') as SystemName[];
  const argoDir = order.includes('argocd') ? argoBinaries() : '';
  if (argoDir === undefined || !existsSync('/usr/bin/redis-server')) {
    process.stdout.write(
      'peer-argocd skipped: Argo CD is not built or redis-server is missing (npm run bench:peer builds Argo CD; apt-get install -y redis-server)\n',
    );
    return;
  }
  const loadAverageAtStart = loadavg();
  const cluster = await startCluster({ name: 'bench-peer', log: () => {} });
  const git = await startGitServer();
  const cacheDir = mkdtempSync(join(tmpdir(), 'capstan-bench-peer-'));
  let db: TestDatabase | undefined;
  let bus: TestBus | undefined;
  try {
    const repo = await git.createRepository('bench/workload.git');
    await commitWorkload(repo, APPS);
    const core = cluster.adminKubeconfig.makeApiClient(CoreV1Api);
    for (const system of order)
      for (let n = 0; n < NAMESPACES; n++)
        await core.createNamespace({ body: { metadata: { name: namespaceOf(system)(n) } } });
    db = await createTestDatabase('capstan_bench_peer');
    bus = await createTestBus('benchpeer');
    const env: Env = { cluster, repo, db, bus, argoDir, cacheDir, version: 1 };
    const results = {} as Record<SystemName, Result>;
    for (const system of order) {
      process.stdout.write(`${system}: ${APPS} Applications × ${RESOURCES} resources\n`);
      results[system] = await measure(system, env);
      await clean(cluster, system);
    }
    if (!results.capstan || !results.argocd) {
      // One system alone (PEER_ARGOCD_ORDER=capstan): its figures in peer-argocd-<system>.json, no
      // comparison (peer-argocd.json stays the last side-by-side run).
      const [alone] = order;
      report(`peer-argocd-${alone}`, figuresOf(alone!, results[alone!]), {
        applications: APPS,
        resourcesPerApplication: RESOURCES,
        order,
        results,
        loadAverageAtStart,
        loadAverageAtEnd: loadavg(),
        note: 'one system alone, same workload and phases as peer-argocd.json; no comparison',
      });
      return;
    }
    const figures = [...figuresOf('capstan', results.capstan), ...figuresOf('argocd', results.argocd)];
    report('peer-argocd', [...figures, ...ratios(results.capstan, results.argocd)], {
      applications: APPS,
      resourcesPerApplication: RESOURCES,
      kinds:
        '4 ConfigMaps, 3 Deployments, 3 Services per Application, one YAML file each, plain directory source',
      order,
      results,
      capstan: {
        processes:
          'repo, api, sync (services/*/dist/main.js), every setting at its default except the webhook secret',
        settings:
          'sync.parallelism 4 (default), reconcile.resync-ms 180000 (default), repo poll.interval-ms default; sync without impersonation (the cluster credential, as Argo CD)',
        statusFrom:
          'bus events sync.status-changed (status, revision), sync.started and sync.succeeded (revision)',
      },
      argocd: {
        version: argoDir.split('/').at(-1),
        processes:
          'argocd-repo-server, argocd-application-controller, argocd-server (serves the webhook), redis-server (Debian)',
        settings: ARGO_SETTINGS,
        settingsNote:
          'processors sized for 2 cores: --status-processors 10 --operation-processors 5 (Argo CD defaults 20 and 10); --app-resync 180 (default); repo-server --parallelismlimit 0 (default, unlimited); everything else default',
        statusFrom:
          'a watch on the Applications: .status.sync.status/.revision and .status.operationState.phase/.syncResult.revision',
      },
      done: 'Synced at the target commit and the last sync operation Succeeded at it; sync, not health (no kubelet: Deployments stay Progressing in both)',
      push: "one commit changing one line (config-0 version) in each Application directory, then one signed GitHub push delivery to each system's /api/webhook",
      cpu: "user+system CPU of the system's own processes and their reaped children (git), from /proc; the shared kube-apiserver/etcd and PostgreSQL CPU per phase are in results.<system>.*.shared (PostgreSQL: backends of the run's database alive at both readings, so approximate, even negative when backends close), NATS and git not counted",
      timeToSynced:
        'per Application, from the start of the batch of creates (phase 1) or from the webhook delivery (phase 2) to done',
      loadAverageAtStart,
      loadAverageAtEnd: loadavg(),
      note: 'the machine is shared with other work (see the load averages); every component (API server, etcd, PostgreSQL, NATS, git, both systems) runs on it; one system at a time',
    });
  } finally {
    await bus?.cleanup();
    await db?.drop();
    await git.close();
    await cluster.stop();
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
