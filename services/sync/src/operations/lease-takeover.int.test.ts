// A sync service process killed with SIGKILL in the middle of a sync, on real PostgreSQL and NATS:
// while it lives its heartbeat keeps the operation's short lease (another replica waiting longer
// than the lease does not take it); once it is dead another replica takes the operation over as
// soon as the lease runs out (seconds, not the former five minutes), and the operation still ends
// with exactly one terminal event.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applicationCreated,
  clusterRegistered,
  connectBus,
  newEvent,
  projectCreated,
  readStream,
  syncRequest,
  type Bus,
} from '@capstan/events';
import { createDb } from '@capstan/db';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import type { SyncDb } from '../sync.table.js';
import { waitUntil } from '../test-support/harness.js';
import { application, project } from '../test-support/fixtures.js';
import { operationStream } from './operations.repository.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const LEASE_MS = 6_000;

interface Replica {
  child: ChildProcess;
  output(): string;
}

/** The sync service as its own process (test-support/sync-process.ts), started and ready. */
async function startReplica(env: Record<string, string>): Promise<Replica> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(here, '../test-support/sync-process.ts')],
    {
      cwd: path.join(here, '../..'),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  await waitUntil(async () => {
    if (child.exitCode !== null) throw new Error(`sync exited with ${child.exitCode}:\n${output}`);
    return /service started/.test(output);
  }, 60_000);
  return { child, output: () => output };
}

describe('a sync replica killed with SIGKILL mid-sync', () => {
  let database: TestDatabase;
  let tbus: TestBus;
  let api: Bus;
  let db: SyncDb;
  let hang: Server;
  const sockets = new Set<Socket>();
  const replicas: Replica[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    [database, tbus] = await Promise.all([createTestDatabase('capstan_sync'), createTestBus('sync')]);
    // The target cluster: accepts connections and never answers, so a sync stays in the middle.
    hang = createServer((s) => void sockets.add(s));
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    env = {
      DATABASE_URL: database.url,
      ...tbus.env('sync'),
      CAPSTAN_LOG_LEVEL: 'info',
      CAPSTAN_SYNC_LEASE_MS: String(LEASE_MS),
      CAPSTAN_SYNC_REQUEST_TIMEOUT_MS: '600000',
      CAPSTAN_SYNC_MAX_ATTEMPTS: '2',
      CAPSTAN_RECONCILE_ENABLED: 'false',
    };
    db = createDb(database.url) as unknown as SyncDb;
    api = await connectBus({ ...tbus.connection('api'), service: 'api' });
  }, 120_000);

  afterAll(async () => {
    for (const r of replicas) r.child.kill('SIGKILL');
    for (const s of sockets) s.destroy();
    hang?.close();
    await api?.close();
    await db?.destroy();
    await tbus?.cleanup();
    await database?.drop();
  });

  it('given a replica dead in the middle of a sync, then another takes it over within the lease and it ends once', async () => {
    const a = await startReplica(env);
    replicas.push(a);
    const server = `https://127.0.0.1:${(hang.address() as { port: number }).port}`;
    const meta = (subject: string) => ({ subject, actor: 'alice', source: 'capstan/api' });
    const cluster = {
      name: 'hung',
      server,
      namespaces: [],
      labels: {},
      credentialType: 'bearer' as const,
      keyId: 'k1',
      insecure: true,
      serverName: '',
      hasCaData: false,
    };
    await api.publish(
      newEvent(clusterRegistered.type, { cluster, uid: randomUUID() }, meta('clusters/hung')),
    );
    const proj = project('team-a', { destinations: [{ server: '*', namespace: '*' }] });
    await api.publish(
      newEvent(projectCreated.type, { project: proj as never, uid: randomUUID() }, meta('projects/team-a')),
    );
    const app = application('guestbook', 'team-a', { server, namespace: 'team-a' });
    await api.publish(
      newEvent(
        applicationCreated.type,
        { application: app as never, uid: randomUUID() },
        meta('applications/argocd/guestbook'),
      ),
    );
    await waitUntil(async () =>
      Boolean(
        await db
          .withSchema('sync')
          .selectFrom('applications')
          .select('name')
          .where('name', '=', 'guestbook')
          .executeTakeFirst(),
      ),
    );

    const operationId = randomUUID();
    await api.publish(
      newEvent(
        syncRequest.type,
        { operationId, application: { namespace: 'argocd', name: 'guestbook' }, dryRun: false, prune: false },
        meta('applications/argocd/guestbook'),
      ),
    );
    const operation = () =>
      db
        .withSchema('sync')
        .selectFrom('operations')
        .select(['status', 'attempts', 'reason'])
        .where('operation_id', '=', operationId)
        .executeTakeFirst();
    const started = async () =>
      (await readStream(db as never, 'sync', operationStream(operationId)))
        .map((e) => e.envelope)
        .filter((e) => e.type === 'io.capstan.sync.started.v1')
        .map((e) => (e.data as { attempt: number }).attempt);
    // Mid-sync: decided, started on record, connecting to the cluster that does not answer.
    await waitUntil(async () => (await started()).length === 1 && sockets.size > 0, 30_000);

    // A second replica waits for work; while the first lives, its heartbeat keeps the lease.
    const b = await startReplica(env);
    replicas.push(b);
    await new Promise((r) => setTimeout(r, LEASE_MS * 1.5));
    expect(await operation()).toMatchObject({ status: 'running', attempts: 1 });

    a.child.kill('SIGKILL');
    const killedAt = Date.now();
    // The lease runs out (at most LEASE_MS after the last renewal) and the second replica claims it.
    await waitUntil(async () => (await operation())?.attempts === 2, LEASE_MS + 10_000);
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(LEASE_MS + 10_000);
    await waitUntil(async () => (await started()).length === 2, 15_000);

    // The cluster now refuses: the second attempt is the last one (max-attempts 2) and fails, once.
    hang.close();
    for (const s of sockets) s.destroy();
    await waitUntil(async () => (await operation())?.status === 'failed', 30_000);
    const events = (await readStream(db as never, 'sync', operationStream(operationId))).map(
      (e) => e.envelope,
    );
    const terminal = events.filter((e) => /\.(succeeded|failed)\.v1$/.test(e.type));
    expect({ started: await started(), terminal: terminal.map((e) => e.type) }).toEqual({
      started: [1, 2],
      terminal: ['io.capstan.sync.failed.v1'],
    });
    expect(b.output()).not.toMatch(/"level":(50|60)/);
  }, 180_000);
});
