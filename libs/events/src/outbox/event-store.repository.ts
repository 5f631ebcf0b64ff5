// The write path: a command's events and their outbox rows commit in the caller's transaction, with
// optimistic concurrency on the aggregate's version. The relay publishes the outbox afterwards.
import { sql, type Kysely, type Transaction } from 'kysely';
import { ConcurrencyError } from '@capstan/service';
import type { Envelope } from '../envelope/envelope.js';
import type { Catalog } from '../catalog/define.js';
import { catalog as defaultCatalog } from '../catalog/index.js';
import type { EventStoreDatabase } from './event-store.table.js';

// Callers pass their own service database type (which includes the event store tables); kysely's
// types are invariant in the database type, so the functions take any and narrow inside.
type AnyDb<DB> = Kysely<DB> | Transaction<DB>;
const narrow = <DB>(db: AnyDb<DB>) => db as unknown as Kysely<EventStoreDatabase>;

export function outboxChannel(schema: string): string {
  return `${schema}_outbox`;
}

export interface StoredEvent {
  version: number;
  envelope: Envelope;
}

export async function readStream<DB>(
  db: AnyDb<DB>,
  schema: string,
  streamId: string,
): Promise<StoredEvent[]> {
  const rows = await narrow(db)
    .withSchema(schema)
    .selectFrom('events')
    .select(['version', 'envelope'])
    .where('stream_id', '=', streamId)
    .orderBy('version')
    .execute();
  return rows.map((r) => ({ version: r.version, envelope: r.envelope as unknown as Envelope }));
}

/**
 * Appends events to an aggregate's stream at `expectedVersion` (0 for a new aggregate) and queues
 * them in the outbox. Must run inside a transaction so that state, events and outbox commit together.
 * Returns the events as stored, each with its `sequence` (the aggregate version it produced).
 */
export async function appendToStream<DB>(
  anyTrx: Transaction<DB>,
  options: {
    schema: string;
    streamId: string;
    expectedVersion: number;
    events: readonly Envelope[];
    catalog?: Catalog;
  },
): Promise<Envelope[]> {
  const trx = narrow(anyTrx);
  const catalog = options.catalog ?? defaultCatalog;
  if (options.events.length === 0) return [];
  const stored = options.events.map((e, i) => ({
    ...e,
    subject: e.subject,
    sequence: options.expectedVersion + i + 1,
  }));
  try {
    await trx
      .withSchema(options.schema)
      .insertInto('events')
      .values(
        stored.map((e) => ({
          stream_id: options.streamId,
          version: e.sequence,
          event_id: e.id,
          type: e.type,
          envelope: JSON.stringify(e),
        })),
      )
      .execute();
  } catch (err) {
    if (
      (err as { code?: string }).code === '23505' &&
      /events_stream_version/.test(String((err as Error).message))
    ) {
      throw new ConcurrencyError(
        `aggregate ${options.streamId} changed since version ${options.expectedVersion}`,
        { cause: err },
      );
    }
    throw err;
  }
  await trx
    .withSchema(options.schema)
    .insertInto('outbox')
    .values(
      stored.map((e) => {
        const d = catalog.get(e.type);
        if (!d) throw new Error(`unknown event type ${e.type}`);
        return { event_id: e.id, subject: d.subject, payload: JSON.stringify(e) };
      }),
    )
    .execute();
  // Wakes the relay at commit; it also polls, so a missed notification only costs latency.
  await sql`select pg_notify(${outboxChannel(options.schema)}, '')`.execute(trx);
  return stored;
}

/** Current version of a stream (0 when it has no events). */
export async function streamVersion<DB>(db: AnyDb<DB>, schema: string, streamId: string): Promise<number> {
  const row = await narrow(db)
    .withSchema(schema)
    .selectFrom('events')
    .select((eb) => eb.fn.max('version').as('v'))
    .where('stream_id', '=', streamId)
    .executeTakeFirst();
  return Number(row?.v ?? 0);
}
