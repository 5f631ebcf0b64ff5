// The stage the sync fault scenarios share: the suite's own PostgreSQL and three-node NATS cluster,
// a real kube-apiserver, the sync service as a real process (services/sync/src/test-support/
// sync-process.ts), and the test playing the api on the bus (a cluster, a project, APPS
// Applications, sync requests). `verify` checks the exactly-once outcome and returns the figures.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import { auditTableNames, createDb, verifyAuditChain } from '@capstan/db';
import {
  applicationCreated,
  clusterRegistered,
  connectBus,
  newEvent,
  projectCreated,
  syncRequest,
  type Bus,
} from '@capstan/events';
import { ensureNamespace, startCluster, type KubeCluster } from '@capstan/test/kube';
import { startOwnPostgres, type OwnPostgres } from './postgres.js';
import { startNatsCluster, type NatsCluster } from './nats-cluster.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '../../..');
export const CYCLES = Number(process.env.FAULTS_CYCLES ?? 5);
export const APPS = 4;
export const LEASE_MS = 5_000;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export async function waitUntil(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      // The database may be down on purpose: look again.
      if (Date.now() > until) throw err;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

export interface SyncStage {
  pg: OwnPostgres;
  nats: NatsCluster;
  db: Kysely<unknown>;
  requested: string[];
  /** The sync processes' last output, for failure messages. */
  output(): string;
  startSync(): Promise<void>;
  killSync(): Promise<void>;
  /** One sync request per Application. */
  requestRound(): Promise<void>;
  /** Operations running now, with their attempt counts. */
  running(): Promise<{ operation_id: string; attempts: number }[]>;
  /** How many of these operations have ended (succeeded or failed). */
  ended(operationIds: string[]): Promise<number>;
  /** Resolves when each of `ops` was claimed again or ended. */
  takenOver(ops: { operation_id: string; attempts: number }[], ms: number): Promise<void>;
  /** Waits for every requested sync to end, checks exactly-once, writes bench/results/faults-<name>.json. */
  verify(name: string, extra: Record<string, unknown>): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

function appManifest(i: number, server: string) {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: `app-${i}`, namespace: 'argocd' },
    spec: {
      project: 'faults',
      source: { repoURL: 'https://git.example/faults.git', path: `app-${i}`, targetRevision: 'HEAD' },
      destination: { server, namespace: 'faults' },
    },
  };
}

async function playApi(api: Bus, kube: KubeCluster): Promise<void> {
  const meta = (subject: string) => ({ subject, actor: 'user:alice', source: 'capstan/api' });
  const cluster = {
    name: 'faults',
    server: kube.server,
    namespaces: [],
    labels: {},
    credentialType: 'bearer' as const,
    keyId: 'k1',
    insecure: false,
    serverName: '',
    hasCaData: true,
  };
  await api.publish(
    newEvent(clusterRegistered.type, { cluster, uid: randomUUID() }, meta('clusters/faults')),
  );
  const project = {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'AppProject',
    metadata: { name: 'faults', namespace: 'argocd' },
    spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
  };
  await api.publish(
    newEvent(projectCreated.type, { project: project as never, uid: randomUUID() }, meta('projects/faults')),
  );
  for (let i = 0; i < APPS; i++)
    await api.publish(
      newEvent(
        applicationCreated.type,
        { application: appManifest(i, kube.server) as never, uid: randomUUID() },
        meta(`applications/argocd/app-${i}`),
      ),
    );
}

/**
 * The test plays the api, whose outbox relay retries a publish that fails (a stream electing a
 * leader after a node was lost answers 503 for a moment): the same event, so JetStream keeps one.
 */
async function publishRetried(bus: Bus, event: Parameters<Bus['publish']>[0]): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      await bus.publish(event);
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await sleep(200);
    }
  }
}

export interface StageOptions {
  /** bus.stream-replicas of the services (3: a replica of every stream on each node, as deploy/k8s-ha). */
  streamReplicas?: number;
}

export async function startSyncStage(options: StageOptions = {}): Promise<SyncStage> {
  const replicas = options.streamReplicas ?? 1;
  // With replicated streams the services are given every node, as in deploy/k8s-ha, and fail over.
  const nodes = replicas > 1 ? ('all' as const) : 0;
  const pg = await startOwnPostgres();
  const admin = createDb(pg.url());
  await sql`create database capstan`.execute(admin);
  await admin.destroy();
  const db = createDb(pg.url('capstan'));
  const nats = await startNatsCluster(`f${Date.now().toString(36)}`);
  const kube = await startCluster({ name: 'faults', log: () => {} });
  await ensureNamespace(kube.adminKubeconfig, 'faults');
  const dir = mkdtempSync(path.join(tmpdir(), 'capstan-faults-'));
  writeFileSync(path.join(dir, 'ca.pem'), kube.caPem);
  const env = {
    DATABASE_URL: pg.url('capstan'),
    ...nats.env('sync', nodes),
    CAPSTAN_BUS_STREAM_REPLICAS: String(replicas),
    CAPSTAN_LOG_LEVEL: 'info',
    CAPSTAN_SYNC_LEASE_MS: String(LEASE_MS),
    CAPSTAN_RECONCILE_ENABLED: 'false',
    // Impersonation is off here: the sync writes with the cluster's credentials, an admin's.
    SYNC_PROCESS_KUBE_TOKEN: kube.adminToken,
    SYNC_PROCESS_KUBE_CA_FILE: path.join(dir, 'ca.pem'),
  };
  const api = await connectBus({
    ...nats.connection('api', nodes),
    service: 'api',
    streamReplicas: replicas,
  });
  await api.provision();
  let sync: ChildProcess | undefined;
  let syncOutput = '';
  const requested: string[] = [];

  const stage: SyncStage = {
    pg,
    nats,
    db,
    requested,
    output: () => syncOutput,
    async startSync() {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', path.join(root, 'services/sync/src/test-support/sync-process.ts')],
        {
          cwd: path.join(root, 'services/sync'),
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      const take = (c: Buffer) => {
        out += c.toString();
        syncOutput = (syncOutput + c.toString()).slice(-20_000);
      };
      child.stdout!.on('data', take);
      child.stderr!.on('data', take);
      await waitUntil(
        'the sync service to start',
        async () => {
          if (child.exitCode !== null) throw new Error(`sync exited:\n${out}`);
          return /service started/.test(out);
        },
        120_000,
      ).catch((err: unknown) => {
        child.kill('SIGKILL');
        throw new Error(`${String(err)}; its output:\n${out.slice(-4_000)}`);
      });
      sync = child;
    },
    async killSync() {
      const c = sync!;
      if (c.exitCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
    },
    async requestRound() {
      for (let i = 0; i < APPS; i++) {
        const operationId = randomUUID();
        requested.push(operationId);
        await publishRetried(
          api,
          newEvent(
            syncRequest.type,
            {
              operationId,
              application: { namespace: 'argocd', name: `app-${i}` },
              dryRun: false,
              prune: false,
            },
            { subject: `applications/argocd/app-${i}`, actor: 'user:alice', source: 'capstan/api' },
          ),
        );
      }
    },
    async running() {
      return (
        await sql<{ operation_id: string; attempts: number }>`
          select operation_id, attempts from sync.operations where status = 'running'`.execute(db)
      ).rows;
    },
    async ended(operationIds) {
      const r = await sql<{ n: string }>`
        select count(*) as n from sync.operations
         where operation_id = any(${operationIds}) and status in ('succeeded', 'failed')`.execute(db);
      return Number(r.rows[0]!.n);
    },
    async takenOver(ops, ms) {
      const rows = async () =>
        (
          await sql`select operation_id, status, attempts, lease_until, now() as now from sync.operations
             where operation_id = any(${ops.map((r) => r.operation_id)})`.execute(db)
        ).rows;
      await waitUntil(
        'the takeover',
        async () => {
          const now = await sql<{ operation_id: string; attempts: number; status: string }>`
            select operation_id, attempts, status from sync.operations
             where operation_id = any(${ops.map((r) => r.operation_id)})`.execute(db);
          return now.rows.every(
            (r) =>
              r.status !== 'running' ||
              r.attempts > ops.find((x) => x.operation_id === r.operation_id)!.attempts,
          );
        },
        ms,
      ).catch(async (err: unknown) => {
        const activity = await sql`
          select pid, state, wait_event_type, wait_event, left(query, 160) as query, xact_start
            from pg_stat_activity where datname = 'capstan' and pid <> pg_backend_pid()`.execute(db);
        throw new Error(
          `${String(err)}: ${JSON.stringify(await rows())}\nsessions: ${JSON.stringify(activity.rows, null, 1)}`,
        );
      });
    },
    async verify(name, extra) {
      await waitUntil(
        'every sync to end',
        async () => {
          const r = await sql<{ n: string }>`
            select count(*) as n from sync.operations where status in ('succeeded', 'failed')`.execute(db);
          return Number(r.rows[0]!.n) === requested.length;
        },
        Number(process.env.FAULTS_SETTLE_MS ?? 300_000),
      ).catch(async (err: unknown) => {
        const open = await sql`
          select operation_id, status, attempts, reason, lease_until, not_before from sync.operations
           where status not in ('succeeded', 'failed')`.execute(db);
        const requestsSeen = await sql<{ n: string }>`select count(*) as n from sync.operations`.execute(db);
        throw new Error(
          `${String(err)}: ${requestsSeen.rows[0]!.n} of ${requested.length} requests queued; open ${JSON.stringify(open.rows)}\n${syncOutput
            .split('\n')
            .filter((l) => /"level":(40|50|60)/.test(l))
            .slice(-15)
            .join('\n')}`,
        );
      });
      // The relay publishes what committed (it polls once a second when notifications are lost).
      await waitUntil(
        'the outbox to drain',
        async () =>
          Number((await sql<{ n: string }>`select count(*) as n from sync.outbox`.execute(db)).rows[0]!.n) ===
          0,
        30_000,
      ).catch(() => undefined);
      const terminal = await sql<{ stream_id: string; n: string }>`
        select stream_id, count(*) as n from sync.events
         where type in ('io.capstan.sync.succeeded.v1', 'io.capstan.sync.failed.v1') group by stream_id`.execute(
        db,
      );
      const perOp = new Map(
        terminal.rows.map((r) => [r.stream_id.replace('sync-operations/', ''), Number(r.n)]),
      );
      const count = async (q: ReturnType<typeof sql<{ n: string }>>) =>
        Number((await q.execute(db)).rows[0]!.n);
      const statuses = await sql<{ status: string; n: string }>`
        select status, count(*) as n from sync.operations group by status`.execute(db);
      const reasons = await sql<{ reason: string }>`
        select distinct reason from sync.operations where status = 'failed' limit 5`.execute(db);
      const chains = await Promise.all(auditTableNames.map((t) => verifyAuditChain(db, t)));
      const figures = {
        scenario: name,
        cycles: CYCLES,
        applications: APPS,
        syncsRequested: requested.length,
        lost: requested.filter((id) => !perOp.has(id)).length,
        duplicateTerminalEvents: requested.filter((id) => (perOp.get(id) ?? 0) > 1).length,
        duplicateDecisions: await count(sql`
          select count(*) as n from (select sync_id, attempt from audit.sync_decisions
            group by sync_id, attempt having count(*) > 1) d`),
        duplicateResourceResults: await count(sql`
          select count(*) as n from (select sync_id, attempt, verb, kind, namespace, name from audit.resource_results
            group by sync_id, attempt, verb, kind, namespace, name having count(*) > 1) d`),
        outboxUnpublished: await count(sql`select count(*) as n from sync.outbox`),
        brokenAuditChains: chains.filter((c) => !c.ok).map((c) => c.table),
        outcomes: Object.fromEntries(statuses.rows.map((r) => [r.status, Number(r.n)])),
        failureReasons: reasons.rows.map((r) => r.reason),
        leaseMs: LEASE_MS,
        ...extra,
      };
      mkdirSync(path.join(root, 'bench/results'), { recursive: true });
      writeFileSync(
        path.join(root, `bench/results/faults-${name}.json`),
        `${JSON.stringify(figures, null, 2)}\n`,
      );
      console.log(JSON.stringify(figures));
      return figures;
    },
    async stop() {
      sync?.kill('SIGKILL');
      await api.close();
      await db.destroy();
      await kube.stop();
      await nats.stop();
      await pg.stop();
    },
  };
  try {
    await stage.startSync();
    await playApi(api, kube);
    await waitUntil(
      'the read model',
      async () => {
        const r = await sql<{ n: string }>`select count(*) as n from sync.applications`.execute(db);
        return Number(r.rows[0]!.n) === APPS;
      },
      60_000,
    );
  } catch (err) {
    // The scenario never gets the stage to stop: stop what was started here.
    await stage.stop().catch(() => undefined);
    throw err;
  }
  return stage;
}

/** What every scenario asserts: nothing lost, nothing twice, the trail intact, every sync succeeded. */
export function outcomeOf(figures: Record<string, unknown>) {
  const keys = [
    'lost',
    'duplicateTerminalEvents',
    'duplicateDecisions',
    'duplicateResourceResults',
    'outboxUnpublished',
    'brokenAuditChains',
    'outcomes',
    'failureReasons',
  ];
  return Object.fromEntries(keys.map((k) => [k, figures[k]]));
}

export function exactlyOnce(requested: number) {
  return {
    lost: 0,
    duplicateTerminalEvents: 0,
    duplicateDecisions: 0,
    duplicateResourceResults: 0,
    outboxUnpublished: 0,
    brokenAuditChains: [],
    outcomes: { succeeded: requested },
    failureReasons: [],
  };
}
