// `--migrate-only` (docs/deploying.md, "Upgrades": a Job or `docker compose run --rm <service>
// --migrate-only` ahead of a rollout), on the built repo service with a real PostgreSQL and NATS: the
// process creates its schema (its own tables, the event store's, the shared audit schema), exits 0,
// and never serves or touches the bus: no ops or gRPC listener, no JetStream stream, no message.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '@capstan/db';
import {
  createTestBus,
  createTestDatabase,
  runServiceToExit,
  testPki,
  type TestBus,
  type TestDatabase,
} from '@capstan/test/infra';

describe('repo --migrate-only', () => {
  let db: TestDatabase;
  let bus: TestBus;
  let admin: Awaited<ReturnType<TestBus['connect']>>;
  let cache: string;

  beforeAll(async () => {
    [db, bus, cache] = await Promise.all([
      createTestDatabase(),
      createTestBus(),
      mkdtemp(path.join(os.tmpdir(), 'capstan-migrate-only-')),
    ]);
    admin = await bus.connect('admin');
  }, 60_000);

  afterAll(async () => {
    await admin?.close();
    await bus?.cleanup();
    await db?.drop();
    if (cache) await rm(cache, { recursive: true, force: true });
  });

  /** The tables of a schema, sorted. */
  async function tables(schema: string): Promise<string[]> {
    const kysely = createDb<unknown>(db.url);
    try {
      const { rows } = await sql<{ table_name: string }>`
        select table_name from information_schema.tables where table_schema = ${schema} order by table_name`.execute(
        kysely,
      );
      return rows.map((r) => r.table_name);
    } finally {
      await kysely.destroy();
    }
  }

  /** The JetStream streams of the test's bus namespace. */
  async function streams(): Promise<string[]> {
    const jsm = await admin.jetstreamManager();
    const names: string[] = [];
    for await (const s of jsm.streams.list())
      if (s.config.name.toLowerCase().startsWith(`${bus.namespace.toLowerCase()}_`))
        names.push(s.config.name);
    return names;
  }

  it('creates the schema, exits 0, and neither serves nor publishes', async () => {
    expect(await tables('repo')).toEqual([]);
    // Everything published under the namespace while the service runs (as the admin, who may read it all).
    const seen: string[] = [];
    const sub = admin.subscribe(`${bus.namespace}.>`, { callback: (_e, m) => seen.push(m.subject) });
    const pki = await testPki();
    const run = await runServiceToExit(
      'repo',
      {
        DATABASE_URL: db.url,
        ...bus.env('repo'),
        ...pki.env('repo'),
        CAPSTAN_GRPC_PORT: '0',
        CAPSTAN_AUTH_SERVICE_TOKENS: `api=${randomBytes(24).toString('hex')}`,
        CAPSTAN_CREDENTIALS_ENCRYPTION_KEYS: JSON.stringify({
          active: 'k1',
          keys: { k1: randomBytes(32).toString('base64') },
        }),
        CAPSTAN_CACHE_DIR: cache,
        ...(process.env.CAPSTAN_CACHE ? { CAPSTAN_CACHE: process.env.CAPSTAN_CACHE } : {}),
      },
      ['--migrate-only'],
    );
    await admin.flush();
    sub.unsubscribe();

    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain('repo: migrations applied');
    // Served nothing: neither the ops server nor the gRPC listener was started.
    expect(run.output).not.toMatch(/service started|opsPort|grpcPort|gRPC listening/);
    // Its schema: the repo's own tables, the event store's and the migrations' record; and the audit schema.
    expect(await tables('repo')).toEqual(
      expect.arrayContaining([
        'applied_settings',
        'credentials',
        'dead_letters',
        'events',
        'kysely_migration',
        'outbox',
        'processed_events',
      ]),
    );
    expect((await tables('audit')).length).toBeGreaterThan(0);
    // Touched nothing on the bus: no stream provisioned, no message published.
    expect(await streams()).toEqual([]);
    expect(seen).toEqual([]);
  }, 90_000);
});
