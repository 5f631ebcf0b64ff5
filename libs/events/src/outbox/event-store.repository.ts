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

/** The events of several streams in one query, by stream (a stream without events is absent). */
export async function readStreams<DB>(
  db: AnyDb<DB>,
  schema: string,
  streamIds: readonly string[],
): Promise<Map<string, StoredEvent[]>> {
  const out = new Map<string, StoredEvent[]>();
  for (const ids of chunks(streamIds)) {
    const rows = await narrow(db)
      .withSchema(schema)
      .selectFrom('events')
      .select(['stream_id', 'version', 'envelope'])
      .where('stream_id', 'in', ids)
      .orderBy('stream_id')
      .orderBy('version')
      .execute();
    for (const r of rows) {
      const list = out.get(r.stream_id) ?? [];
      list.push({ version: r.version, envelope: r.envelope as unknown as Envelope });
      out.set(r.stream_id, list);
    }
  }
  return out;
}

/** Rows per statement of the batch functions (well under PostgreSQL's 65,535 parameters). */
const CHUNK = 1000;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
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
  const { schema, catalog, ...append } = options;
  return (await appendToStreams(anyTrx, { schema, appends: [append], ...(catalog ? { catalog } : {}) }))[0]!;
}

/**
 * appendToStream for several streams at once, in as few statements as their number allows (one
 * insert of events, one of outbox rows and one notification per thousand events): the same rows,
 * the same optimistic concurrency (any stream that moved refuses the whole append). Returns each
 * stream's events as stored, in the order of `appends`.
 */
export async function appendToStreams<DB>(
  anyTrx: Transaction<DB>,
  options: {
    schema: string;
    appends: readonly { streamId: string; expectedVersion: number; events: readonly Envelope[] }[];
    catalog?: Catalog;
  },
): Promise<Envelope[][]> {
  const trx = narrow(anyTrx);
  const catalog = options.catalog ?? defaultCatalog;
  const stored = options.appends.map((a) =>
    a.events.map((e, i) => ({ ...e, subject: e.subject, sequence: a.expectedVersion + i + 1 })),
  );
  const rows = options.appends.flatMap((a, i) => stored[i]!.map((e) => ({ streamId: a.streamId, e })));
  if (rows.length === 0) return stored;
  try {
    for (const batch of chunks(rows))
      await trx
        .withSchema(options.schema)
        .insertInto('events')
        .values(
          batch.map(({ streamId, e }) => ({
            stream_id: streamId,
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
      const streams = options.appends.map((a) => `${a.streamId} changed since version ${a.expectedVersion}`);
      throw new ConcurrencyError(
        streams.length === 1 ? `aggregate ${streams[0]}` : `one of ${streams.length} aggregates changed`,
        { cause: err },
      );
    }
    throw err;
  }
  for (const batch of chunks(rows))
    await trx
      .withSchema(options.schema)
      .insertInto('outbox')
      .values(
        batch.map(({ e }) => {
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
