// What every event-sourced service wires the same way at start-up: its database (own schema migrated,
// with the event store tables, and the shared audit schema), the bus (streams provisioned), and the
// outbox relay. Readiness follows the database and the bus; shutdown stops them in reverse order.
import type { Kysely } from 'kysely';
import { createDb, migrateAudit, migrateToLatest, pingDb, type Migrations } from '@capstan/db';
import { MigrationsOnlyDone, type CommonConfig, type ServiceContext } from '@capstan/service';
import { connectBus, type Bus } from './bus/bus.js';
import type { Catalog } from './catalog/define.js';
import { eventStoreMigrations, type EventStoreDatabase } from './outbox/event-store.table.js';
import { startOutboxRelay, type OutboxRelay } from './outbox/relay.js';
import { postgresDeadLetters } from './consumers/dead-letters.js';
import { startDeadLetterReplay } from './consumers/dead-letter-replay.js';
import { deadLetterOwners, type DeadLetterOwner } from './catalog/dead-letters.js';

export interface Backbone<DB> {
  db: Kysely<DB & EventStoreDatabase>;
  bus: Bus;
  relay: OutboxRelay;
}

export async function startBackbone<DB>(
  ctx: ServiceContext<CommonConfig>,
  options: { schema: string; migrations?: Migrations; catalog?: Catalog },
): Promise<Backbone<DB>> {
  const url = ctx.config['database.url'];
  const db = createDb<DB & EventStoreDatabase>(url, { applicationName: `capstan-${ctx.name}` });
  ctx.onShutdown('database', () => db.destroy());
  await migrateAudit(db);
  const applied = await migrateToLatest(db, {
    schema: options.schema,
    migrations: { ...eventStoreMigrations(options.schema), ...options.migrations },
  });
  if (applied.length > 0) ctx.logger.info({ schema: options.schema, applied }, 'migrated');
  if (ctx.config['migrate-only']) throw new MigrationsOnlyDone();
  ctx.addReadinessCheck('database', () => pingDb(db));

  const bus = await connectBus({
    url: ctx.config['nats.url'],
    service: ctx.name,
    namespace: ctx.config['bus.namespace'],
    streamReplicas: ctx.config['bus.stream-replicas'],
    user: ctx.config['nats.user'],
    password: ctx.config['nats.password'],
    ...(options.catalog ? { catalog: options.catalog } : {}),
    // Every consumer of the service records what it gives up on in its own schema.
    deadLetters: postgresDeadLetters(db, options.schema),
  });
  ctx.onShutdown('bus', () => bus.close());
  await bus.provision();
  ctx.addReadinessCheck('bus', () => bus.isConnected());

  // The owner's side of `capstan admin dlq replay` (the api commands, this service replays).
  if ((deadLetterOwners as readonly string[]).includes(ctx.name)) {
    const replay = await startDeadLetterReplay(bus, db, {
      service: ctx.name as DeadLetterOwner,
      schema: options.schema,
    });
    ctx.onShutdown('dead-letter replay', () => replay.stop());
  }

  const relay = await startOutboxRelay({
    db,
    databaseUrl: url,
    schema: options.schema,
    bus,
    onError: (err) => ctx.logger.warn({ err }, 'outbox relay round failed; retrying'),
  });
  ctx.onShutdown('outbox relay', () => relay.stop());
  return { db, bus, relay };
}
