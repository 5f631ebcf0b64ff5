// ApplicationSets at scale (issue 11): a list generator of 1,000 elements, created through the api
// by the admin, so the appset service generates 1,000 Applications and the api checks and writes
// them all or nothing. The api and appset run as their own processes (services/*/dist/main.js,
// configured by environment as in production: mutual TLS, delegations, service tokens) on real
// PostgreSQL and NATS. Figures:
// - create → all 1,000 Applications listed by the api (p50 over rounds, the set deleted in between);
// - a preview (Generate: generation and the admin's verdict on each Application, nothing written);
// - a regenerate with no change through the api (create with upsert, same spec): time and events;
// - a background no-op reconcile: from marking the set due to the appset's "reconciled" log line
//   (result unchanged), with the reconcile tick at 20 ms (so up to 20 ms of it is waiting for the
//   tick), and the events it wrote; its inputs are unchanged, so it does not generate. The same with
//   the record of its inputs dropped first, so it generates and finds nothing to change;
// - peak RSS (VmHWM) of the api and appset processes.
// Goals: ≤ 2 s for 1,000 Applications, a no-op reconcile ≤ 100 ms, and no events for a no-op.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { credentials, type ChannelCredentials } from '@grpc/grpc-js';
import { sql, type Kysely } from 'kysely';
import { createDb } from '@capstan/db';
import { apiv1, bearer, unary } from '@capstan/proto';
import { generateKeyringJson } from '@capstan/sealing';
import { createTestBus, createTestDatabase, testPki } from '@capstan/test/infra';
import { report, summarize, type Figure } from './harness.js';

const APPS = 1000;
const ROUNDS = Number(process.env.APPSET_BENCH_ROUNDS ?? 5);
const NOOP_ROUNDS = 5;
// The api's api.body-limit (largest HTTP body and gRPC message, default 1 MiB) bounds the one Apply
// that carries the 1,000 generated Applications appset → api; these fit in the default.
// APPSET_BENCH_API_BODY_LIMIT=<bytes> runs with another.
const BODY_LIMIT = process.env.APPSET_BENCH_API_BODY_LIMIT ?? '';
const ADMIN_PASSWORD = 'bench-admin-password';
const services = resolve(dirname(fileURLToPath(import.meta.url)), '../../services');
// APPSET_BENCH_NODE_ARGS_API / _APPSET: extra node flags of that process, e.g.
// '--cpu-prof --cpu-prof-dir=/tmp/prof' (the profile is written when the process stops).
const nodeArgs = (name: 'api' | 'appset') =>
  (process.env[`APPSET_BENCH_NODE_ARGS_${name.toUpperCase()}`] ?? '').split(' ').filter(Boolean);

interface Proc {
  output(): string;
  /** Peak resident set size (VmHWM), MiB. */
  peakRssMiB(): number;
  stop(): Promise<void>;
}

async function startProcess(name: 'api' | 'appset', env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, [...nodeArgs(name), resolve(services, name, 'dist/main.js')], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (c: Buffer) => (output += c.toString());
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start:\n${output}`)), 60_000);
    child.stdout.on('data', () => /service started/.test(output) && (clearTimeout(timer), ok()));
    child.on('exit', (code) => (clearTimeout(timer), fail(new Error(`${name} exited ${code}:\n${output}`))));
  });
  return {
    output: () => output,
    peakRssMiB: () =>
      Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024,
    async stop() {
      // APPSET_BENCH_OUTPUT=<dir> keeps each process's output there (<dir>/api.log, <dir>/appset.log).
      if (process.env.APPSET_BENCH_OUTPUT)
        child.once('exit', () =>
          writeFileSync(resolve(process.env.APPSET_BENCH_OUTPUT!, `${name}.log`), output),
        );
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

function listSet(): apiv1.ApplicationSet {
  return apiv1.ApplicationSet.fromJSON({
    metadata: { name: 'bench-list' },
    spec: {
      generators: [
        {
          list: {
            elements: Array.from({ length: APPS }, (_, i) => ({ name: `svc-${i}`, ns: `ns-${i % 50}` })),
          },
        },
      ],
      template: {
        metadata: { name: '{{name}}', labels: { set: 'bench-list' } },
        spec: {
          project: 'bench',
          source: {
            repoURL: 'https://git.example.com/bench/apps.git',
            path: '{{name}}',
            targetRevision: 'HEAD',
          },
          destination: { server: 'https://kubernetes.default.svc', namespace: '{{ns}}' },
        },
      },
      // Deleting the set removes its Applications at once: the benchmark measures the api and the
      // appset service; a cascade would wait for the sync service to clean 1,000 clusters' worth of
      // objects, which is the sync benchmarks' business.
      syncPolicy: { preserveResourcesOnDeletion: true },
    },
  });
}

const ms = (since: number) => performance.now() - since;

export async function main(): Promise<void> {
  const [db, bus, pki] = await Promise.all([createTestDatabase(), createTestBus('appsetbench'), testPki()]);
  const tokens = {
    apiToAppset: randomBytes(24).toString('hex'),
    appsetToApi: randomBytes(24).toString('hex'),
  };
  const appsetPort = await freePort();
  const api = await startProcess('api', {
    DATABASE_URL: db.url,
    ...bus.env('api'),
    CAPSTAN_HTTP_PORT: '0',
    CAPSTAN_GRPC_PORT: '0',
    CAPSTAN_API_HTTP_PORT: '0',
    CAPSTAN_LOG_LEVEL: 'info',
    CAPSTAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
    CAPSTAN_API_ENCRYPTION_KEYS: generateKeyringJson(),
    ...(BODY_LIMIT ? { CAPSTAN_API_BODY_LIMIT: BODY_LIMIT } : {}),
    CAPSTAN_SERVICE_TOKENS: `appset=${tokens.appsetToApi}`,
    CAPSTAN_APPSET_ADDRESS: `127.0.0.1:${appsetPort}`,
    CAPSTAN_APPSET_SERVICE_TOKEN: tokens.apiToAppset,
    ...pki.env('api'),
    CAPSTAN_AUTH_DELEGATION_KEY: pki.delegation.privateKeyPem,
  }).catch(async (err: unknown) => {
    await Promise.all([bus.cleanup(), db.drop()]);
    throw err;
  });
  const apiAddress = `127.0.0.1:${/"grpcPort":(\d+)/.exec(api.output())![1]}`;
  const appset = await startProcess('appset', {
    DATABASE_URL: db.url,
    ...bus.env('appset'),
    CAPSTAN_HTTP_PORT: '0',
    // debug: the reconciler's "reconciled" lines time the no-op reconcile.
    CAPSTAN_LOG_LEVEL: 'debug',
    CAPSTAN_GRPC_PORT: String(appsetPort),
    CAPSTAN_AUTH_SERVICE_TOKENS: `api=${tokens.apiToAppset}`,
    CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY: pki.delegation.publicKeyPem,
    CAPSTAN_API_ADDRESS: apiAddress,
    CAPSTAN_API_SERVICE_TOKEN: tokens.appsetToApi,
    // A list generator reads no repository: nothing listens there.
    CAPSTAN_REPO_ADDRESS: `127.0.0.1:${await freePort()}`,
    CAPSTAN_REPO_SERVICE_TOKEN: randomBytes(24).toString('hex'),
    CAPSTAN_RECONCILE_TICK_MS: '20',
    CAPSTAN_RECONCILE_REQUEUE_SECONDS: '3600',
    ...pki.env('appset'),
  }).catch(async (err: unknown) => {
    await api.stop();
    await Promise.all([bus.cleanup(), db.drop()]);
    throw err;
  });
  const creds = credentials.createSsl(Buffer.from(pki.material('api').ca));
  const pool = createDb<unknown>(db.url, { max: 2 });
  try {
    await measure(apiAddress, creds, pool, api, appset);
  } finally {
    await pool.destroy();
    await appset.stop();
    await api.stop();
    await bus.cleanup();
    await db.drop();
  }
}

async function measure(
  address: string,
  creds: ChannelCredentials,
  pool: Kysely<unknown>,
  api: Proc,
  appset: Proc,
) {
  const sessions = new apiv1.SessionServiceClient(address, creds);
  const projects = new apiv1.ProjectServiceClient(address, creds);
  const apps = new apiv1.ApplicationServiceClient(address, creds);
  const sets = new apiv1.ApplicationSetServiceClient(address, creds);
  const admin = bearer(
    (await unary(sessions.create.bind(sessions), { username: 'admin', password: ADMIN_PASSWORD })).token,
  );
  await unary(
    projects.create.bind(projects),
    {
      project: apiv1.Project.fromJSON({
        metadata: { name: 'bench' },
        spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
      }),
      upsert: false,
    },
    { metadata: admin },
  );
  const count = async () =>
    (
      await unary(
        apps.list.bind(apps),
        { projects: ['bench'], selector: '', limit: APPS, pageToken: '' },
        { metadata: admin },
      )
    ).items.length;
  const waitForCount = async (n: number) => {
    while ((await count()) !== n) await new Promise((r) => setTimeout(r, 10));
  };
  const events = async () => {
    const tables = await sql<{ schema: string }>`
      select table_schema as schema from information_schema.tables where table_name = 'events'`.execute(pool);
    let total = 0;
    for (const t of tables.rows) {
      const r = await sql<{
        n: string;
      }>`select count(*) as n from ${sql.table(`${t.schema}.events`)}`.execute(pool);
      total += Number(r.rows[0]!.n);
    }
    return total;
  };
  const create = (upsert: boolean) =>
    unary(sets.create.bind(sets), { applicationset: listSet(), upsert, dryRun: false }, { metadata: admin });

  const loadBefore = loadavg();
  const createMs: number[] = [];
  const registeredMs: number[] = [];
  const deleteMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    await create(false);
    createMs.push(ms(start));
    await waitForCount(APPS);
    registeredMs.push(ms(start));
    if (round === ROUNDS - 1) break;
    const del = performance.now();
    await unary(sets.delete.bind(sets), { name: 'bench-list', appsetNamespace: '' }, { metadata: admin });
    await waitForCount(0);
    deleteMs.push(ms(del));
  }

  // A regenerate with no change, asked through the api: generation, the dry-run check, nothing written.
  const upsertMs: number[] = [];
  const eventsBeforeUpsert = await events();
  for (let i = 0; i < NOOP_ROUNDS; i++) {
    const start = performance.now();
    await create(true);
    upsertMs.push(ms(start));
  }
  const upsertEvents = (await events()) - eventsBeforeUpsert;

  // A preview: generation and the caller's verdict on each Application, nothing written.
  const generateMs: number[] = [];
  for (let i = 0; i < NOOP_ROUNDS; i++) {
    const start = performance.now();
    await unary(sets.generate.bind(sets), { applicationset: listSet() }, { metadata: admin });
    generateMs.push(ms(start));
  }

  // The background reconcile of an unchanged set, as its owner.
  const reconcileMs: number[] = [];
  const eventsBeforeReconcile = await events();
  for (let i = 0; i < NOOP_ROUNDS; i++) reconcileMs.push(await noOpReconcile(pool, appset));
  const reconcileEvents = (await events()) - eventsBeforeReconcile;
  // The same, generating again (inputs not known to be unchanged): the engine's cost.
  const regenerateMs: number[] = [];
  const eventsBeforeRegenerate = await events();
  for (let i = 0; i < NOOP_ROUNDS; i++) regenerateMs.push(await noOpReconcile(pool, appset, true));
  const regenerateEvents = (await events()) - eventsBeforeRegenerate;
  await waitForCount(APPS);

  const registered = summarize(registeredMs);
  const reconcile = summarize(reconcileMs);
  const figures: Figure[] = [
    {
      name: `create → ${APPS} Applications registered p50`,
      value: registered.p50,
      unit: 'ms',
      goal: '≤ 2000',
      met: registered.p50 <= 2000,
    },
    { name: 'create → registered, first round (cold processes)', value: registeredMs[0]!, unit: 'ms' },
    { name: 'create call p50', value: summarize(createMs).p50, unit: 'ms' },
    { name: `delete set + ${APPS} Applications p50`, value: summarize(deleteMs).p50, unit: 'ms' },
    { name: `generate (preview, ${APPS} verdicts) p50`, value: summarize(generateMs).p50, unit: 'ms' },
    { name: 'no-op regenerate via api (upsert) p50', value: summarize(upsertMs).p50, unit: 'ms' },
    {
      name: 'no-op regenerate via api: events',
      value: upsertEvents,
      unit: 'events',
      goal: '0',
      met: upsertEvents === 0,
    },
    {
      name: 'no-op background reconcile p50',
      value: reconcile.p50,
      unit: 'ms',
      goal: '≤ 100',
      met: reconcile.p50 <= 100,
    },
    {
      name: 'no-op background reconcile: events',
      value: reconcileEvents,
      unit: 'events',
      goal: '0',
      met: reconcileEvents === 0,
    },
    {
      name: 'background reconcile, regenerated without change p50',
      value: summarize(regenerateMs).p50,
      unit: 'ms',
    },
    {
      name: 'background reconcile, regenerated without change: events',
      value: regenerateEvents,
      unit: 'events',
      goal: '0',
      met: regenerateEvents === 0,
    },
    { name: 'peak RSS api', value: api.peakRssMiB(), unit: 'MiB' },
    { name: 'peak RSS appset', value: appset.peakRssMiB(), unit: 'MiB' },
  ];
  report('appset', figures, {
    applications: APPS,
    rounds: ROUNDS,
    noOpRounds: NOOP_ROUNDS,
    apiBodyLimitBytes: BODY_LIMIT ? Number(BODY_LIMIT) : 'default',
    loadAverage: { before: loadBefore, after: loadavg() },
    registeredMs,
    createMs,
    upsertMs,
    generateMs,
    reconcileMs,
    regenerateMs,
    reconcileNote:
      'from marking the set due to the "reconciled" log line; includes up to one 20 ms tick. The no-op reconcile finds the inputs unchanged (owner delegations, pre-generate check, nothing to resolve for a list set) and does not generate; the regenerated one generates and compares',
  });
}

/**
 * Marks the set due and waits for the reconciler's line saying it found nothing to change. With
 * `regenerate`, the record of its last reconcile's inputs is dropped first, so it generates again
 * (what a reconcile costs when a trigger or requeue finds an input changed, here without a change).
 */
async function noOpReconcile(pool: Kysely<unknown>, appset: Proc, regenerate = false): Promise<number> {
  const seen = appset.output().length;
  const marked = Date.now();
  if (regenerate)
    await sql`update appset.application_sets set reconciled_inputs = null, next_reconcile_at = now() where name = 'bench-list'`.execute(
      pool,
    );
  else
    await sql`update appset.application_sets set next_reconcile_at = now() where name = 'bench-list'`.execute(
      pool,
    );
  for (;;) {
    const line = appset
      .output()
      .slice(seen)
      .split('\n')
      .find((l) => l.includes('"msg":"reconciled"'));
    if (line) {
      const logged = JSON.parse(line) as { time: string; result: string };
      if (logged.result !== 'unchanged') throw new Error(`reconcile of an unchanged set: ${line}`);
      return Date.parse(logged.time) - marked;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
