// Fault scenario: the sync service killed with SIGKILL at random points during a stream of syncs,
// FAULTS_CYCLES times (5 in npm test, 100 in `npm run faults`), on the suite's own PostgreSQL
// (initdb) and three-node NATS JetStream cluster, and a real kube-apiserver. The test plays the api
// (publishes clusters, projects, Applications and sync requests as the api's bus user). Asserted:
// every requested sync ends exactly once (one terminal event, status succeeded or failed), one
// decision per attempt, no resource result written twice by one attempt, the audit hash chains
// verify, every outbox row is published. Figures (cycles, lost, duplicates, time to take over the
// syncs a dead replica held, p50/p99) go to bench/results/faults-sync-kill.json.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { createDb, verifyAuditChain, auditTableNames } from '@capstan/db';
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
const root = path.resolve(here, '../../..');
const CYCLES = Number(process.env.FAULTS_CYCLES ?? 5);
const APPS = 4;
const LEASE_MS = 5_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitUntil(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

describe('fault: the sync service killed with SIGKILL during a stream of syncs', () => {
  let pg: OwnPostgres;
  let nats: NatsCluster;
  let kube: KubeCluster;
  let db: Kysely<unknown>;
  let api: Bus;
  let sync: ChildProcess | undefined;
  let env: Record<string, string>;

  const startSync = async () => {
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
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    await waitUntil(
      'the sync service to start',
      async () => {
        if (child.exitCode !== null) throw new Error(`sync exited:\n${out}`);
        return /service started/.test(out);
      },
      60_000,
    );
    sync = child;
  };
  const killSync = async () => {
    const c = sync!;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };

  beforeAll(async () => {
    pg = await startOwnPostgres();
    const admin = createDb(pg.url());
    await sql`create database capstan`.execute(admin);
    await admin.destroy();
    db = createDb(pg.url('capstan'));
    nats = await startNatsCluster(`f${Date.now().toString(36)}`);
    kube = await startCluster({ name: 'faults', log: () => {} });
    await ensureNamespace(kube.adminKubeconfig, 'faults');
    const dir = mkdtempSync(path.join(tmpdir(), 'capstan-faults-'));
    writeFileSync(path.join(dir, 'ca.pem'), kube.caPem);
    env = {
      DATABASE_URL: pg.url('capstan'),
      ...nats.env('sync'),
      CAPSTAN_LOG_LEVEL: 'info',
      CAPSTAN_SYNC_LEASE_MS: String(LEASE_MS),
      CAPSTAN_RECONCILE_ENABLED: 'false',
      // Impersonation is off here: the sync writes with the cluster's credentials, an admin's.
      SYNC_PROCESS_KUBE_TOKEN: kube.adminToken,
      SYNC_PROCESS_KUBE_CA_FILE: path.join(dir, 'ca.pem'),
    };
    api = await connectBus({ ...nats.connection('api'), service: 'api' });
    await api.provision();
    await startSync();
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
      newEvent(
        projectCreated.type,
        { project: project as never, uid: randomUUID() },
        meta('projects/faults'),
      ),
    );
    for (let i = 0; i < APPS; i++) {
      const app = {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { name: `app-${i}`, namespace: 'argocd' },
        spec: {
          project: 'faults',
          source: { repoURL: 'https://git.example/faults.git', path: `app-${i}`, targetRevision: 'HEAD' },
          destination: { server: kube.server, namespace: 'faults' },
        },
      };
      await api.publish(
        newEvent(
          applicationCreated.type,
          { application: app as never, uid: randomUUID() },
          meta(`applications/argocd/app-${i}`),
        ),
      );
    }
    await waitUntil(
      'the read model',
      async () => {
        const r = await sql<{ n: string }>`select count(*) as n from sync.applications`.execute(db);
        return Number(r.rows[0]!.n) === APPS;
      },
      60_000,
    );
  }, 600_000);

  afterAll(async () => {
    sync?.kill('SIGKILL');
    await api?.close();
    await db?.destroy();
    await kube?.stop();
    await nats?.stop();
    await pg?.stop();
  });

  it(`given ${CYCLES} SIGKILLs at random points of a stream of syncs, then every sync ends exactly once and nothing is lost`, async () => {
    const requested: string[] = [];
    const recoveryMs: number[] = [];
    let interrupted = 0;
    const request = async (app: string) => {
      const operationId = randomUUID();
      requested.push(operationId);
      await api.publish(
        newEvent(
          syncRequest.type,
          { operationId, application: { namespace: 'argocd', name: app }, dryRun: false, prune: false },
          { subject: `applications/argocd/${app}`, actor: 'user:alice', source: 'capstan/api' },
        ),
      );
    };
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      for (let i = 0; i < APPS; i++) await request(`app-${i}`);
      await sleep(200 + Math.floor(Math.random() * 1_500));
      const running = (
        await sql<{ operation_id: string; attempts: number }>`
          select operation_id, attempts from sync.operations where status = 'running'`.execute(db)
      ).rows;
      await killSync();
      const killedAt = Date.now();
      await startSync();
      if (running.length > 0) {
        interrupted += running.length;
        // Taken over: each operation the dead replica held is claimed again (or finished) by the new one.
        await waitUntil(
          'the takeover',
          async () => {
            const now = await sql<{ operation_id: string; attempts: number; status: string }>`
            select operation_id, attempts, status from sync.operations
             where operation_id = any(${running.map((r) => r.operation_id)})`.execute(db);
            return now.rows.every(
              (r) =>
                r.status !== 'running' ||
                r.attempts > running.find((x) => x.operation_id === r.operation_id)!.attempts,
            );
          },
          LEASE_MS * 6,
        );
        recoveryMs.push(Date.now() - killedAt);
      }
    }
    await waitUntil(
      'every sync to end',
      async () => {
        const r = await sql<{ n: string }>`
        select count(*) as n from sync.operations where status in ('succeeded', 'failed')`.execute(db);
        return Number(r.rows[0]!.n) === requested.length;
      },
      300_000,
    );

    const terminal = await sql<{ stream_id: string; n: string }>`
      select stream_id, count(*) as n from sync.events
       where type in ('io.capstan.sync.succeeded.v1', 'io.capstan.sync.failed.v1') group by stream_id`.execute(
      db,
    );
    const perOp = new Map(
      terminal.rows.map((r) => [r.stream_id.replace('sync-operations/', ''), Number(r.n)]),
    );
    const lost = requested.filter((id) => !perOp.has(id));
    const duplicated = requested.filter((id) => (perOp.get(id) ?? 0) > 1);
    const statuses = await sql<{ status: string; n: string }>`
      select status, count(*) as n from sync.operations group by status`.execute(db);
    const decisionDupes = await sql<{ n: string }>`
      select count(*) as n from (select sync_id, attempt from audit.sync_decisions
        group by sync_id, attempt having count(*) > 1) d`.execute(db);
    const resultDupes = await sql<{ n: string }>`
      select count(*) as n from (select sync_id, attempt, verb, kind, namespace, name from audit.resource_results
        group by sync_id, attempt, verb, kind, namespace, name having count(*) > 1) d`.execute(db);
    const outbox = await sql<{ n: string }>`select count(*) as n from sync.outbox`.execute(db);
    const chains = await Promise.all(auditTableNames.map((t) => verifyAuditChain(db, t)));

    const figures = {
      scenario: 'sync-kill',
      cycles: CYCLES,
      applications: APPS,
      syncsRequested: requested.length,
      syncsInterruptedByKill: interrupted,
      lost: lost.length,
      duplicateTerminalEvents: duplicated.length,
      duplicateDecisions: Number(decisionDupes.rows[0]!.n),
      duplicateResourceResults: Number(resultDupes.rows[0]!.n),
      outcomes: Object.fromEntries(statuses.rows.map((r) => [r.status, Number(r.n)])),
      leaseMs: LEASE_MS,
      recoveryMs: {
        p50: percentile(recoveryMs, 50),
        p99: percentile(recoveryMs, 99),
        samples: recoveryMs.length,
      },
    };
    mkdirSync(path.join(root, 'bench/results'), { recursive: true });
    writeFileSync(
      path.join(root, 'bench/results/faults-sync-kill.json'),
      `${JSON.stringify(figures, null, 2)}\n`,
    );
    console.log(JSON.stringify(figures));

    expect({ lost, duplicated }).toEqual({ lost: [], duplicated: [] });
    expect([figures.duplicateDecisions, figures.duplicateResourceResults, Number(outbox.rows[0]!.n)]).toEqual(
      [0, 0, 0],
    );
    expect(chains.filter((c) => !c.ok)).toEqual([]);
    const reasons = await sql<{ reason: string }>`
      select distinct reason from sync.operations where status = 'failed' limit 5`.execute(db);
    expect({ outcomes: figures.outcomes, reasons: reasons.rows }).toEqual({
      outcomes: { succeeded: requested.length },
      reasons: [],
    });
  }, 3_600_000);
});
