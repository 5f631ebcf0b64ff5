// Authorised reads of the api (issue 6): `app get` and `app list` over gRPC with 1,000 Applications,
// as a user whose every read goes through RBAC (a role granting get on */*) and is audited. Measures
// closed-loop throughput (16 calls in flight) and latency under an open-loop load of 500 requests/s
// (latency counted from when each request was due, so a stall is not hidden). The api runs in this
// process on real PostgreSQL and NATS. Goal: p99 < 10 ms at 500 requests/s.
import { performance } from 'node:perf_hooks';
import { credentials } from '@grpc/grpc-js';
import { apiv1, bearer, unary } from '@capstan/proto';
import { createLogger } from '@capstan/service';
import { createTestBus, createTestDatabase } from '@capstan/test/infra';
import { generateKeyringJson, startApi } from '@capstan/api';
import { report, summarize, type Figure } from './harness.js';

const APPS = 1000;
const PROJECTS = 10;
const RATE = 500;

async function closedLoop(seconds: number, inFlight: number, call: (i: number) => Promise<unknown>): Promise<number> {
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

async function openLoop(seconds: number, rate: number, call: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number; achieved: number }> {
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
  const s = summarize(latencies);
  return { p50: s.p50, p99: s.p99, achieved: total / ((performance.now() - start) / 1000) };
}

export async function main(): Promise<void> {
  const db = await createTestDatabase('capstan_bench_api');
  const bus = await createTestBus('benchapi');
  const api = await startApi(
    {
      databaseUrl: db.url,
      natsUrl: bus.url,
      busNamespace: bus.namespace,
      grpcHost: '127.0.0.1',
      grpcPort: 0,
      httpHost: '127.0.0.1',
      httpPort: 0,
      bodyLimit: 1024 * 1024,
      policyFile: '',
      policyCsv: 'p, role:reader, applications, get, */*, allow\ng, readers, role:reader',
      defaultRole: '',
      sessionTtlSeconds: 3600,
      signingKey: '',
      adminPassword: 'bench-admin-password',
      serviceTokens: '',
      credentialReaders: [],
      delegatingServices: [],
      encryptionKeys: generateKeyringJson(),
      encryptionKeyFile: '',
    },
    createLogger('api', { level: 'warn' }),
  );
  const address = `127.0.0.1:${api.grpcPort}`;
  const sessions = new apiv1.SessionServiceClient(address, credentials.createInsecure());
  const projects = new apiv1.ProjectServiceClient(address, credentials.createInsecure());
  const apps = new apiv1.ApplicationServiceClient(address, credentials.createInsecure());
  const accounts = new apiv1.AccountServiceClient(address, credentials.createInsecure());
  try {
    const admin = bearer((await unary(sessions.create.bind(sessions), { username: 'admin', password: 'bench-admin-password' })).token);
    for (let p = 0; p < PROJECTS; p++) {
      await unary(projects.create.bind(projects), { project: apiv1.Project.fromJSON({ metadata: { name: `team-${p}` }, spec: { sourceRepos: ['*'] } }), upsert: false }, { metadata: admin });
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
              source: { repoURL: `https://git.example.com/team-${n % PROJECTS}/apps.git`, path: `app-${n}`, targetRevision: 'HEAD' },
              destination: { server: 'https://kubernetes.default.svc', namespace: `ns-${n}` },
            },
          });
          return unary(apps.create.bind(apps), { application, upsert: false }, { metadata: admin });
        }),
      );
    }
    const seedSeconds = (performance.now() - seedStart) / 1000;
    await unary(accounts.create.bind(accounts), { name: 'reader', password: 'reader-password', capabilities: ['login'], groups: ['readers'] }, { metadata: admin });
    const reader = bearer((await unary(sessions.create.bind(sessions), { username: 'reader', password: 'reader-password' })).token);

    const get = (i: number) => unary(apps.get.bind(apps), { name: `app-${(i * 37) % APPS}`, appNamespace: '', project: '' }, { metadata: reader });
    const list100 = () => unary(apps.list.bind(apps), { projects: [], selector: '', limit: 100, pageToken: '' }, { metadata: reader });
    const listAll = async () => {
      let pageToken = '';
      let n = 0;
      do {
        const r = await unary(apps.list.bind(apps), { projects: [], selector: '', limit: 1000, pageToken }, { metadata: reader });
        n += r.items.length;
        pageToken = r.nextPageToken;
      } while (pageToken);
      if (n !== APPS) throw new Error(`listed ${n} applications, expected ${APPS}`);
    };

    await closedLoop(2, 16, get); // warm-up: JIT, connection pool, RBAC cache
    const getThroughput = await closedLoop(5, 16, get);
    const getOpen = await openLoop(10, RATE, get);
    const list100Throughput = await closedLoop(5, 16, list100);
    const list100Open = await openLoop(10, RATE, list100);
    const listAllThroughput = await closedLoop(5, 4, listAll);
    const listAllOpen = await openLoop(10, 20, listAll);

    const goal = (p99: number): Pick<Figure, 'goal' | 'met'> => ({ goal: '< 10 ms at 500 req/s', met: p99 < 10 });
    const figures: Figure[] = [
      { name: 'seed: applications created', value: Math.round(APPS / seedSeconds), unit: 'creates/s' },
      { name: 'app get: throughput (16 in flight)', value: Math.round(getThroughput), unit: 'req/s' },
      { name: 'app get: p50 at 500 req/s', value: getOpen.p50, unit: 'ms' },
      { name: 'app get: p99 at 500 req/s', value: getOpen.p99, unit: 'ms', ...goal(getOpen.p99) },
      { name: 'app list (page of 100): throughput', value: Math.round(list100Throughput), unit: 'req/s' },
      { name: 'app list (page of 100): p50 at 500 req/s', value: list100Open.p50, unit: 'ms' },
      { name: 'app list (page of 100): p99 at 500 req/s', value: list100Open.p99, unit: 'ms', ...goal(list100Open.p99) },
      { name: 'app list (all 1,000): throughput (4 in flight)', value: Math.round(listAllThroughput), unit: 'req/s' },
      { name: 'app list (all 1,000): p50 at 20 req/s', value: listAllOpen.p50, unit: 'ms' },
      { name: 'app list (all 1,000): p99 at 20 req/s', value: listAllOpen.p99, unit: 'ms' },
    ];
    report('api-reads', figures, {
      applications: APPS,
      projects: PROJECTS,
      transport: 'gRPC on loopback, api in the benchmark process',
      rbac: 'reader role via group binding; allowed reads audited in batches',
      achievedRates: { get: getOpen.achieved, list100: list100Open.achieved, listAll: listAllOpen.achieved },
    });
  } finally {
    for (const c of [sessions, projects, apps, accounts]) c.close();
    await api.stop();
    await bus.cleanup();
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
