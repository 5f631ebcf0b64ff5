// The service skeleton with the backbone, as the appset runs it, on the real PostgreSQL and NATS:
// migrations, provisioning, readiness that follows the database and bus, and a clean stop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startService, MigrationsOnlyDone } from '@capstan/service';
import { connectBus } from '@capstan/events';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { appsetSettings } from './settings.js';
import { startAppset } from './appset-service.js';

describe('appset service skeleton', () => {
  let tdb: TestDatabase;
  let tbus: TestBus;
  const env = () => ({ DATABASE_URL: tdb.url, ...tbus.env('appset') });

  beforeAll(async () => {
    [tdb, tbus] = await Promise.all([createTestDatabase(), createTestBus()]);
  });
  afterAll(async () => {
    await Promise.all([tdb.drop(), tbus.cleanup()]);
  });

  it('migrates, provisions the streams, reports ready, and stops', async () => {
    const svc = await startService({
      name: 'appset',
      settings: appsetSettings,
      sources: { argv: [], env: env() },
      start: startAppset,
    });
    const ready = await fetch(`http://127.0.0.1:${svc.opsPort}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { database: true, bus: true } });

    const client = new pg.Client({ connectionString: tdb.url });
    await client.connect();
    const tables = await client.query(
      `select table_schema || '.' || table_name as t from information_schema.tables
        where table_schema in ('appset', 'audit') order by 1`,
    );
    await client.end();
    expect(tables.rows.map((r) => r.t)).toEqual(
      expect.arrayContaining([
        'appset.events',
        'appset.outbox',
        'appset.processed_events',
        'audit.sync_decisions',
      ]),
    );
    const bus = await connectBus({ ...tbus.connection('appset'), service: 'appset' });
    for (const kind of ['EVT', 'CMD', 'EXT', 'DLQ']) {
      expect((await bus.jsm.streams.info(`${tbus.namespace}_${kind}`.toUpperCase())).config.subjects).toEqual(
        [`${tbus.namespace}.${kind.toLowerCase()}.>`],
      );
    }
    await bus.close();
    await svc.stop();
    await expect(fetch(`http://127.0.0.1:${svc.opsPort}/healthz`)).rejects.toThrow();
  });

  it('applies migrations and stops when asked for --migrate-only', async () => {
    await expect(
      startService({
        name: 'appset',
        settings: appsetSettings,
        sources: { argv: ['--migrate-only'], env: env() },
        start: startAppset,
      }),
    ).rejects.toBeInstanceOf(MigrationsOnlyDone);
  });

  it('refuses to start when the database is unreachable, naming it', async () => {
    await expect(
      startService({
        name: 'appset',
        settings: appsetSettings,
        sources: { argv: [], env: { ...env(), DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' } },
        start: startAppset,
      }),
    ).rejects.toThrow(/ECONNREFUSED|connect/);
  });
});
