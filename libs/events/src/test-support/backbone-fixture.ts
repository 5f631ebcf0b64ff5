// A real bus namespace and a fresh database with the event store tables in schema `svc`, for the
// backbone's own integration tests.
import type { Kysely } from 'kysely';
import { createDb, migrateToLatest } from '@capstan/db';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { connectBus, type Bus } from '../bus/bus.js';
import { eventStoreMigrations, type EventStoreDatabase } from '../outbox/event-store.table.js';
import { testCatalog } from './counter.js';

export interface BackboneFixture {
  tbus: TestBus;
  tdb: TestDatabase;
  bus: Bus;
  db: Kysely<EventStoreDatabase>;
  close(): Promise<void>;
}

export async function backboneFixture(): Promise<BackboneFixture> {
  const [tbus, tdb] = await Promise.all([createTestBus(), createTestDatabase()]);
  // The mechanism's own tests publish the test catalog's types: as the operator's admin user.
  const bus = await connectBus({ ...tbus.connection('admin'), service: 'test', catalog: testCatalog });
  await bus.provision();
  const db = createDb<EventStoreDatabase>(tdb.url);
  await migrateToLatest(db, { schema: 'svc', migrations: eventStoreMigrations('svc') });
  return {
    tbus,
    tdb,
    bus,
    db,
    async close() {
      await bus.close();
      await db.destroy();
      await Promise.all([tbus.cleanup(), tdb.drop()]);
    },
  };
}
