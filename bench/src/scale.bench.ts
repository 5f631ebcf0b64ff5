// Capstan at scale (issue 17): for each size in SCALE_BENCH_SIZES (default 1000,10000), on a fresh
// control plane (scale-stack.ts: api and appset as their own processes, real PostgreSQL and NATS):
//  - time to register that many Applications: ApplicationSets with list generators of 1,000
//    elements each, created through the api, until the api lists them all;
//  - memory per 1,000 Applications: peak resident set size of the api and appset processes after
//    registration minus their resident set size before it; the reconciler's heap (after GC) in this process;
//  - api list latency, client-side (gRPC on loopback, one call in flight): the first page of 100 as
//    a reader who sees every Application, and as a tenant who sees 1% of them (project `tenant`),
//    goal p99 ≤ 10 ms; and a walk through every page of 100;
//  - with a kube-apiserver (@capstan/test/kube), the sync reconciler: catching up with every
//    Application, then a full pass with no change (desired state re-rendered and compared);
// then how each figure grows from one size to the next: the ratio, and for totals the ratio divided
// by the growth in Applications (≈ 1 is linear; near the growth itself would be O(n²)).
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CoreV1Api } from '@kubernetes/client-node';
import { apiv1, unary } from '@capstan/proto';
import { createTestBus, createTestDatabase, type TestBus } from '@capstan/test/infra';
import { startCluster, type KubeCluster } from '@capstan/test/kube';
import { report, rssMiB, summarize, type Figure } from './harness.js';
import { NAMESPACES, startReconciler, startStack, TENANT_PROJECT, type Stack } from './scale-stack.js';

const SIZES = (process.env.SCALE_BENCH_SIZES ?? '1000,10000').split(',').map(Number);
const SET_SIZE = 1000;
const LIST_SAMPLES = Number(process.env.SCALE_BENCH_LIST_SAMPLES ?? 400);
// SCALE_BENCH_RECONCILE=0 skips the reconciler (no kube-apiserver started).
// SCALE_BENCH_RESULT names the results file (bench/results/<name>.json, default scale).
const RESULT = process.env.SCALE_BENCH_RESULT ?? 'scale';
const RECONCILE = process.env.SCALE_BENCH_RECONCILE !== '0';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = () => (gc(), gc(), process.memoryUsage().heapUsed);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nsOf = (i: number) => `scale-${i % NAMESPACES}`;

/** The k-th set: Applications app-<k*1000> … , one in a hundred in the tenant's project. */
function listSet(k: number, size: number, cluster: boolean): apiv1.ApplicationSet {
  const first = k * SET_SIZE;
  const elements = Array.from({ length: Math.min(SET_SIZE, size - first) }, (_, j) => {
    const i = first + j;
    return { name: `app-${i}`, ns: nsOf(i), project: i % 100 === 0 ? TENANT_PROJECT : 'bench' };
  });
  return apiv1.ApplicationSet.fromJSON({
    metadata: { name: `scale-${k}` },
    spec: {
      generators: [{ list: { elements } }],
      template: {
        metadata: { name: '{{name}}' },
        spec: {
          project: '{{project}}',
          source: {
            repoURL: 'https://git.example.com/scale/apps.git',
            path: '{{name}}',
            targetRevision: 'HEAD',
          },
          // The registered cluster, or without one the api's own (what the api checks either way).
          destination: cluster
            ? { name: 'bench', namespace: '{{ns}}' }
            : { server: 'https://kubernetes.default.svc', namespace: '{{ns}}' },
        },
      },
      syncPolicy: { preserveResourcesOnDeletion: true },
    },
  });
}

type Who = keyof Stack['who'];
const listPage = (s: Stack, who: Who, pageToken = '', limit = 100) =>
  unary(s.apps.list.bind(s.apps), { projects: [], selector: '', limit, pageToken }, { metadata: s.who[who] });

async function countAll(s: Stack): Promise<number> {
  let n = 0;
  let token = '';
  do {
    const r = await listPage(s, 'admin', token, 1000);
    n += r.items.length;
    token = r.nextPageToken;
  } while (token);
  return n;
}

/** Client-side latency of the first page of 100, one call in flight, after a warm-up. */
async function pageLatency(s: Stack, who: Who, expect: number) {
  const first = await listPage(s, who);
  if (first.items.length !== expect) throw new Error(`${who} saw ${first.items.length}, expected ${expect}`);
  for (let i = 0; i < 50; i++) await listPage(s, who);
  const samples: number[] = [];
  for (let i = 0; i < LIST_SAMPLES; i++) {
    const start = performance.now();
    await listPage(s, who);
    samples.push(performance.now() - start);
  }
  return summarize(samples);
}

/** Every page of 100 as the reader: the total, and the p99 of one page anywhere in the list. */
async function pageWalk(s: Stack, size: number) {
  const pages: number[] = [];
  let token = '';
  let n = 0;
  const start = performance.now();
  do {
    const t = performance.now();
    const r = await listPage(s, 'reader', token);
    pages.push(performance.now() - t);
    n += r.items.length;
    token = r.nextPageToken;
  } while (token);
  if (n !== size) throw new Error(`the walk listed ${n} Applications, expected ${size}`);
  return { totalMs: performance.now() - start, pageP99: summarize(pages).p99 };
}

async function register(s: Stack, size: number, cluster: boolean): Promise<number> {
  const start = performance.now();
  for (let k = 0; k * SET_SIZE < size; k++)
    await unary(
      s.sets.create.bind(s.sets),
      { applicationset: listSet(k, size, cluster), upsert: false, dryRun: false },
      // Generating, checking and writing 1,000 Applications can outlast the default 30 s on a busy machine.
      { metadata: s.who.admin, timeoutMs: 600_000 },
    );
  for (;;) {
    const n = await countAll(s);
    if (n === size) return performance.now() - start;
    if (n > size) throw new Error(`${n} Applications listed, expected ${size}`);
    await sleep(100);
  }
}

async function until(check: () => boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

async function reconcile(db: string, bus: TestBus, cluster: KubeCluster, size: number) {
  const heapBefore = heapAfterGc();
  const start = performance.now();
  const r = await startReconciler({ databaseUrl: db, bus, cluster });
  const rec = r.reconciler;
  try {
    await until(() => rec.stats().applications === size && rec.idle(), 1_800_000, 'catch-up');
    const catchUpMs = performance.now() - start;
    const heapPer1000MiB = (((heapAfterGc() - heapBefore) / size) * 1000) / 2 ** 20;
    const passes: number[] = [];
    for (let round = 0; round < 3; round++) {
      const t = performance.now();
      rec.resyncAll();
      await until(() => rec.idle(), 1_800_000, 'full pass');
      passes.push(performance.now() - t);
    }
    return { catchUpMs, fullPassMs: summarize(passes).p50, passes, heapPer1000MiB, stats: rec.stats() };
  } finally {
    await r.stop();
  }
}

async function measureSize(size: number, cluster: KubeCluster | undefined) {
  const loadBefore = loadavg();
  const [db, bus] = await Promise.all([createTestDatabase('capstan_bench_scale'), createTestBus('scale')]);
  let stack: Stack | undefined;
  try {
    stack = await startStack({ databaseUrl: db.url, bus, cluster });
    const rssBefore = { api: rssMiB(stack.api.pid), appset: rssMiB(stack.appset.pid) };
    const registerMs = await register(stack, size, cluster !== undefined);
    await sleep(2000); // the processes settle (audit batches, projections)
    const rssAfter = { api: rssMiB(stack.api.pid), appset: rssMiB(stack.appset.pid) };
    // The peak, not the current RSS: a collection between the readings would hide the growth.
    const per1000 = (k: 'api' | 'appset') => ((rssAfter[k].peak - rssBefore[k].rss) / size) * 1000;
    const reader = await pageLatency(stack, 'reader', 100);
    const tenant = await pageLatency(stack, 'tenant', Math.min(100, size / 100));
    const walk = await pageWalk(stack, size);
    const rec = cluster ? await reconcile(db.url, bus, cluster, size) : undefined;
    return {
      size,
      registerMs,
      rssPer1000MiB: { api: per1000('api'), appset: per1000('appset') },
      rss: { before: rssBefore, after: rssAfter },
      reader,
      tenant,
      walk,
      reconcile: rec,
      loadAverage: { before: loadBefore, after: loadavg() },
    };
  } finally {
    await stack?.stop();
    await bus.cleanup();
    await db.drop();
  }
}

type Result = Awaited<ReturnType<typeof measureSize>>;

function figuresOf(r: Result): Figure[] {
  const n = r.size;
  const goal = (p99: number): Pick<Figure, 'goal' | 'met'> => ({ goal: '≤ 10', met: p99 <= 10 });
  const out: Figure[] = [
    { name: `${n}: register (list sets → all listed)`, value: r.registerMs, unit: 'ms' },
    { name: `${n}: registered per second`, value: Math.round(n / (r.registerMs / 1000)), unit: 'apps/s' },
    { name: `${n}: api RSS per 1,000 Applications`, value: r.rssPer1000MiB.api, unit: 'MiB' },
    { name: `${n}: appset RSS per 1,000 Applications`, value: r.rssPer1000MiB.appset, unit: 'MiB' },
    { name: `${n}: list page of 100 (reader, all) p50`, value: r.reader.p50, unit: 'ms' },
    {
      name: `${n}: list page of 100 (reader, all) p99`,
      value: r.reader.p99,
      unit: 'ms',
      ...goal(r.reader.p99),
    },
    { name: `${n}: list page (tenant sees 1%) p50`, value: r.tenant.p50, unit: 'ms' },
    { name: `${n}: list page (tenant sees 1%) p99`, value: r.tenant.p99, unit: 'ms', ...goal(r.tenant.p99) },
    { name: `${n}: walk every page of 100 (reader)`, value: r.walk.totalMs, unit: 'ms' },
    { name: `${n}: one page anywhere in the walk p99`, value: r.walk.pageP99, unit: 'ms' },
  ];
  if (r.reconcile)
    out.push(
      {
        name: `${n}: reconciler catch-up (start → all known, idle)`,
        value: r.reconcile.catchUpMs,
        unit: 'ms',
      },
      { name: `${n}: full reconcile pass, no change`, value: r.reconcile.fullPassMs, unit: 'ms' },
      {
        name: `${n}: reconciler heap per 1,000 Applications`,
        value: r.reconcile.heapPer1000MiB,
        unit: 'MiB',
      },
    );
  return out;
}

/** How each figure grows from one size to the next; totals are divided by the growth in size. */
function growth(a: Result, b: Result): Figure[] {
  const k = b.size / a.size;
  const label = `${a.size} → ${b.size}`;
  const total = (name: string, x: number, y: number): Figure => ({
    name: `${label}: ${name} ÷ size growth (1 = linear)`,
    value: y / x / k,
    unit: '×',
  });
  const flat = (name: string, x: number, y: number): Figure => ({
    name: `${label}: ${name} (1 = constant)`,
    value: y / x,
    unit: '×',
  });
  const out = [
    total('register', a.registerMs, b.registerMs),
    flat('api RSS per 1,000', a.rssPer1000MiB.api, b.rssPer1000MiB.api),
    flat('appset RSS per 1,000', a.rssPer1000MiB.appset, b.rssPer1000MiB.appset),
    flat('page of 100 p99 (reader)', a.reader.p99, b.reader.p99),
    flat('page p99 (tenant 1%)', a.tenant.p99, b.tenant.p99),
    total('walk every page', a.walk.totalMs, b.walk.totalMs),
  ];
  if (a.reconcile && b.reconcile)
    out.push(
      total('reconciler catch-up', a.reconcile.catchUpMs, b.reconcile.catchUpMs),
      total('full pass', a.reconcile.fullPassMs, b.reconcile.fullPassMs),
      flat('reconciler heap per 1,000', a.reconcile.heapPer1000MiB, b.reconcile.heapPer1000MiB),
    );
  return out;
}

export async function main(): Promise<void> {
  let cluster: KubeCluster | undefined;
  if (RECONCILE) {
    cluster = await startCluster({ name: 'bench-scale', log: () => {} });
    const core = cluster.adminKubeconfig.makeApiClient(CoreV1Api);
    for (let n = 0; n < NAMESPACES; n++)
      await core.createNamespace({ body: { metadata: { name: `scale-${n}` } } });
  }
  const results: Result[] = [];
  try {
    for (const size of SIZES) {
      process.stdout.write(`size ${size}…\n`);
      results.push(await measureSize(size, cluster));
      process.stdout.write(`${JSON.stringify(figuresOf(results.at(-1)!).map((f) => [f.name, f.value]))}\n`);
    }
  } finally {
    await cluster?.stop();
  }
  const figures = results.flatMap(figuresOf);
  for (let i = 1; i < results.length; i++) figures.push(...growth(results[i - 1]!, results[i]!));
  report(RESULT, figures, {
    sizes: SIZES,
    reconciler: RECONCILE,
    applicationSetSize: SET_SIZE,
    listSamples: LIST_SAMPLES,
    results: results.map(({ reconcile: rec, ...r }) => ({
      ...r,
      reconcile: rec && { ...rec, stats: rec.stats },
    })),
    method:
      'fresh PostgreSQL database, NATS account, api and appset processes per size (one kube-apiserver for all); list latency is client-side over gRPC on loopback with one call in flight; RSS per 1,000 is (peak RSS (VmHWM) after registration − RSS before it) ÷ size × 1,000; the reconciler runs in the benchmark process with a stand-in manifest source (one ConfigMap per Application, never applied, so every Application stays OutOfSync and a pass changes nothing)',
    loadAverageAtEnd: loadavg(),
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
