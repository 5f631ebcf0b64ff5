// Authorised reads of the api (issue 6): `app get` and `app list` over gRPC with 1,000 Applications,
// as a user whose every read goes through RBAC (a role granting get on */*) and is audited. Measures
// closed-loop throughput (16 calls in flight) and latency under an open-loop load of 500 requests/s
// (latency counted from when each request was due, so a stall is not hidden). The api runs as its own
// process (services/api/dist/main.js, as in production) on real PostgreSQL and NATS; the load comes
// from this process. Goal: p99 < 10 ms at 500 requests/s.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { credentials } from '@grpc/grpc-js';
import { apiv1, bearer, unary } from '@capstan/proto';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestBus, createTestDatabase } from '@capstan/test/infra';
import { generateKeyringJson } from '@capstan/sealing';
import { report, summarize, type Figure } from './harness.js';

const APPS = 1000;
const PROJECTS = 10;
const RATE = 500;
// The runtime setting the api's README recommends: a larger young generation, so the short-lived
// objects of each request die in fewer, cheaper scavenges (API_NODE_OPTIONS='' measures without it).
const API_NODE_OPTIONS = process.env.API_NODE_OPTIONS ?? '--max-semi-space-size=64';
// Extra node flags for the api process that NODE_OPTIONS refuses, e.g. to profile it:
// API_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' (the profile is written when the api stops).
const API_NODE_ARGS = (process.env.API_NODE_ARGS ?? '').split(' ').filter(Boolean);
const apiMain = resolve(dirname(fileURLToPath(import.meta.url)), '../../services/api/dist/main.js');

async function startApiProcess(
  env: Record<string, string>,
): Promise<{ grpcPort: number; opsPort: number; cpuMs(): number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [...API_NODE_ARGS, apiMain], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      NODE_OPTIONS: API_NODE_OPTIONS,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const [grpcPort, opsPort] = await new Promise<[number, number]>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`api did not start:\n${output}`)), 60_000);
    child.stdout.on('data', () => {
      const m = /"grpcPort":(\d+)/.exec(output);
      const ops = /"opsPort":(\d+)/.exec(output);
      if (m && ops) {
        clearTimeout(timer);
        ok([Number(m[1]), Number(ops[1])]);
      }
    });
    child.on('exit', (code) => fail(new Error(`api exited with ${code}:\n${output}`)));
  });
  return {
    grpcPort,
    opsPort,
    // user + system CPU of the api process so far (Linux /proc; clock ticks of 10 ms).
    cpuMs: () => {
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    stop: async () => {
      // API_OUTPUT=<file> keeps the api's output (e.g. with API_NODE_ARGS=--trace-gc).
      if (process.env.API_OUTPUT) child.once('exit', () => writeFileSync(process.env.API_OUTPUT!, output));
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

interface Scrape {
  /** Cumulative bucket counts of the api's request histogram for one operation (gRPC, OK). */
  buckets: Map<number, number>;
  /** The api's longest event-loop delay since the previous scrape (prom-client resets it per scrape). */
  loopDelayMaxMs: number;
  /** Cumulative garbage-collection time and pauses over 10 ms. */
  gcMs: number;
  gcPausesOver10ms: number;
}

const metricValue = (text: string, re: RegExp) =>
  [...text.matchAll(re)].reduce((sum, m) => sum + Number(m[1]), 0);

async function histogram(opsPort: number, operation: string): Promise<Scrape> {
  const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
  const gcCount = metricValue(text, /^nodejs_gc_duration_seconds_count\{[^}]*\} (\S+)/gm);
  const gcUnder10 = metricValue(text, /^nodejs_gc_duration_seconds_bucket\{le="0\.01"[^}]*\} (\S+)/gm);
  return {
    buckets: requestBuckets(text, operation),
    loopDelayMaxMs: metricValue(text, /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? (\S+)/gm) * 1000,
    gcMs: metricValue(text, /^nodejs_gc_duration_seconds_sum\{[^}]*\} (\S+)/gm) * 1000,
    gcPausesOver10ms: gcCount - gcUnder10,
  };
}

/** What the api itself went through between two scrapes. */
function apiStalls(before: Scrape, after: Scrape) {
  return {
    loopDelayMaxMs: after.loopDelayMaxMs,
    gcMs: after.gcMs - before.gcMs,
    gcPausesOver10ms: after.gcPausesOver10ms - before.gcPausesOver10ms,
  };
}

function requestBuckets(text: string, operation: string): Map<number, number> {
  const out = new Map<number, number>();
  const re = new RegExp(`^capstan_api_request_duration_seconds_bucket\\{([^}]*)\\} (\\d+)`, 'gm');
  for (const m of text.matchAll(re)) {
    const labels = m[1]!;
    if (
      !labels.includes(`operation="${operation}"`) ||
      !labels.includes('transport="grpc"') ||
      !labels.includes('code="OK"')
    )
      continue;
    const le = /le="([^"]+)"/.exec(labels)![1]!;
    out.set(le === '+Inf' ? Infinity : Number(le), Number(m[2]));
  }
  return out;
}

/** A percentile (ms) of the calls between two histogram snapshots, interpolated within its bucket. */
function serverPercentile(b: Scrape, a: Scrape, p: number): number {
  const [before, after] = [b.buckets, a.buckets];
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const total = counts.at(-1) ?? 0;
  const target = (p / 100) * total;
  let prevBound = 0;
  let prevCount = 0;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i]! >= target) {
      const bound = Number.isFinite(bounds[i]!) ? bounds[i]! : prevBound;
      const share = counts[i]! === prevCount ? 1 : (target - prevCount) / (counts[i]! - prevCount);
      return (prevBound + (bound - prevBound) * share) * 1000;
    }
    prevBound = bounds[i]!;
    prevCount = counts[i]!;
  }
  return NaN;
}

async function closedLoop(
  seconds: number,
  inFlight: number,
  call: (i: number) => Promise<unknown>,
): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async (_, w) => {
      for (let i = w; performance.now() < end; i += inFlight) {
        await call(i);
        done++;
      }
    }),
  );
  return done / seconds;
}

async function openLoop(
  seconds: number,
  rate: number,
  call: (i: number) => Promise<unknown>,
  apiCpuMs: () => number,
): Promise<{
  p50: number;
  p99: number;
  achieved: number;
  clientStallMs: number;
  cpuMsPerCall: { api: number; client: number };
}> {
  const apiCpuBefore = apiCpuMs();
  const clientCpuBefore = process.cpuUsage();
  const eld = monitorEventLoopDelay({ resolution: 2 });
  eld.enable();
  const start = performance.now();
  const total = seconds * rate;
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(call(i).then(() => void latencies.push(performance.now() - due)));
  }
  await Promise.all(pending);
  eld.disable();
  const s = summarize(latencies);
  const clientCpu = process.cpuUsage(clientCpuBefore);
  return {
    p50: s.p50,
    p99: s.p99,
    achieved: total / ((performance.now() - start) / 1000),
    clientStallMs: eld.max / 1e6,
    cpuMsPerCall: {
      api: (apiCpuMs() - apiCpuBefore) / total,
      client: (clientCpu.user + clientCpu.system) / 1000 / total,
    },
  };
}

export async function main(): Promise<void> {
  const loadAverageAtStart = loadavg();
  const db = await createTestDatabase('capstan_bench_api');
  const bus = await createTestBus('benchapi');
  const api = await startApiProcess({
    DATABASE_URL: db.url,
    ...bus.env('api'),
    CAPSTAN_GRPC_PORT: '0',
    CAPSTAN_API_HTTP_PORT: '0',
    CAPSTAN_HTTP_PORT: '0',
    CAPSTAN_LOG_LEVEL: 'info',
    CAPSTAN_ADMIN_PASSWORD: 'bench-admin-password',
    CAPSTAN_RBAC_POLICY_CSV: 'p, role:reader, applications, get, */*, allow\ng, readers, role:reader',
    CAPSTAN_API_ENCRYPTION_KEYS: generateKeyringJson(),
  });
  const address = `127.0.0.1:${api.grpcPort}`;
  const sessions = new apiv1.SessionServiceClient(address, credentials.createInsecure());
  const projects = new apiv1.ProjectServiceClient(address, credentials.createInsecure());
  const apps = new apiv1.ApplicationServiceClient(address, credentials.createInsecure());
  const accounts = new apiv1.AccountServiceClient(address, credentials.createInsecure());
  try {
    const admin = bearer(
      (await unary(sessions.create.bind(sessions), { username: 'admin', password: 'bench-admin-password' }))
        .token,
    );
    for (let p = 0; p < PROJECTS; p++) {
      await unary(
        projects.create.bind(projects),
        {
          project: apiv1.Project.fromJSON({
            metadata: { name: `team-${p}` },
            spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
          }),
          upsert: false,
        },
        { metadata: admin },
      );
    }
    const seedStart = performance.now();
    for (let i = 0; i < APPS; i += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, APPS - i) }, (_, k) => {
          const n = i + k;
          const application = apiv1.Application.fromJSON({
            metadata: { name: `app-${n}`, labels: { tier: n % 2 ? 'web' : 'db' } },
            spec: {
              project: `team-${n % PROJECTS}`,
              source: {
                repoURL: `https://git.example.com/team-${n % PROJECTS}/apps.git`,
                path: `app-${n}`,
                targetRevision: 'HEAD',
              },
              destination: { server: 'https://kubernetes.default.svc', namespace: `ns-${n}` },
            },
          });
          return unary(apps.create.bind(apps), { application, upsert: false }, { metadata: admin });
        }),
      );
    }
    const seedSeconds = (performance.now() - seedStart) / 1000;
    await unary(
      accounts.create.bind(accounts),
      { name: 'reader', password: 'reader-password', capabilities: ['login'], groups: ['readers'] },
      { metadata: admin },
    );
    const reader = bearer(
      (await unary(sessions.create.bind(sessions), { username: 'reader', password: 'reader-password' }))
        .token,
    );

    const get = (i: number) =>
      unary(
        apps.get.bind(apps),
        { name: `app-${(i * 37) % APPS}`, appNamespace: '', project: '' },
        { metadata: reader },
      );
    const list100 = () =>
      unary(
        apps.list.bind(apps),
        { projects: [], selector: '', limit: 100, pageToken: '' },
        { metadata: reader },
      );
    const listAll = async () => {
      let pageToken = '';
      let n = 0;
      do {
        const r = await unary(
          apps.list.bind(apps),
          { projects: [], selector: '', limit: 1000, pageToken },
          { metadata: reader },
        );
        n += r.items.length;
        pageToken = r.nextPageToken;
      } while (pageToken);
      if (n !== APPS) throw new Error(`listed ${n} applications, expected ${APPS}`);
    };

    await closedLoop(2, 16, get); // warm-up: JIT, connection pool, RBAC cache
    const getThroughput = await closedLoop(5, 16, get);
    let before = await histogram(api.opsPort, 'ApplicationService.Get');
    const getOpen = await openLoop(10, RATE, get, api.cpuMs);
    let after = await histogram(api.opsPort, 'ApplicationService.Get');
    const getServer = { p50: serverPercentile(before, after, 50), p99: serverPercentile(before, after, 99) };
    const getStalls = apiStalls(before, after);
    const list100Throughput = await closedLoop(5, 16, list100);
    before = await histogram(api.opsPort, 'ApplicationService.List');
    const list100Open = await openLoop(10, RATE, list100, api.cpuMs);
    after = await histogram(api.opsPort, 'ApplicationService.List');
    const list100Server = {
      p50: serverPercentile(before, after, 50),
      p99: serverPercentile(before, after, 99),
    };
    const list100Stalls = apiStalls(before, after);
    const listAllThroughput = await closedLoop(5, 4, listAll);
    before = await histogram(api.opsPort, 'ApplicationService.List');
    const listAllOpen = await openLoop(10, 20, listAll, api.cpuMs);
    after = await histogram(api.opsPort, 'ApplicationService.List');
    const listAllServer = { p99: serverPercentile(before, after, 99) };
    const listAllStalls = apiStalls(before, after);

    const goal = (p99: number): Pick<Figure, 'goal' | 'met'> => ({
      goal: '< 10 ms at 500 req/s',
      met: p99 < 10,
    });
    const figures: Figure[] = [
      { name: 'seed: applications created', value: Math.round(APPS / seedSeconds), unit: 'creates/s' },
      { name: 'app get: throughput (16 in flight)', value: Math.round(getThroughput), unit: 'req/s' },
      { name: 'app get: p50 at 500 req/s (client)', value: getOpen.p50, unit: 'ms' },
      { name: 'app get: p99 at 500 req/s (client)', value: getOpen.p99, unit: 'ms', ...goal(getOpen.p99) },
      { name: 'app get: p50 at 500 req/s (server)', value: getServer.p50, unit: 'ms' },
      {
        name: 'app get: p99 at 500 req/s (server)',
        value: getServer.p99,
        unit: 'ms',
        ...goal(getServer.p99),
      },
      { name: 'app list (page of 100): throughput', value: Math.round(list100Throughput), unit: 'req/s' },
      { name: 'app list (page of 100): p50 at 500 req/s (client)', value: list100Open.p50, unit: 'ms' },
      {
        name: 'app list (page of 100): p99 at 500 req/s (client)',
        value: list100Open.p99,
        unit: 'ms',
        ...goal(list100Open.p99),
      },
      { name: 'app list (page of 100): p50 at 500 req/s (server)', value: list100Server.p50, unit: 'ms' },
      {
        name: 'app list (page of 100): p99 at 500 req/s (server)',
        value: list100Server.p99,
        unit: 'ms',
        ...goal(list100Server.p99),
      },
      {
        name: 'app list (all 1,000): throughput (4 in flight)',
        value: Math.round(listAllThroughput),
        unit: 'req/s',
      },
      { name: 'app list (all 1,000): p50 at 20 req/s', value: listAllOpen.p50, unit: 'ms' },
      { name: 'app list (all 1,000): p99 at 20 req/s', value: listAllOpen.p99, unit: 'ms' },
      { name: 'app list (all 1,000): p99 per page call (server)', value: listAllServer.p99, unit: 'ms' },
    ];
    report('api-reads', figures, {
      applications: APPS,
      projects: PROJECTS,
      transport: 'gRPC on loopback, api in its own process, load from the benchmark process',
      apiNodeOptions: API_NODE_OPTIONS,
      latency:
        "client: from when each request was due (includes the load generator's own stalls on a 2-core machine); server: capstan_api_request_duration_seconds histogram, interpolated within buckets",
      rbac: 'reader role via group binding; allowed reads audited in batches',
      achievedRates: { get: getOpen.achieved, list100: list100Open.achieved, listAll: listAllOpen.achieved },
      // The load generator's longest event-loop stall per phase, and the machine's load: on a shared
      // 2-core machine other work inflates the tails; read the figures with these beside them.
      clientStallMs: {
        get: getOpen.clientStallMs,
        list100: list100Open.clientStallMs,
        listAll: listAllOpen.clientStallMs,
      },
      // The api's own longest event-loop delay and garbage collection in each open-loop phase.
      apiStalls: { get: getStalls, list100: list100Stalls, listAll: listAllStalls },
      // CPU per call in each open-loop phase (api process; load generator incl. decoding answers).
      cpuMsPerCall: {
        get: getOpen.cpuMsPerCall,
        list100: list100Open.cpuMsPerCall,
        listAll: listAllOpen.cpuMsPerCall,
      },
      loadAverageAtStart,
      loadAverage: loadavg(),
    });
  } finally {
    for (const c of [sessions, projects, apps, accounts]) c.close();
    await api.stop();
    await bus.cleanup();
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
