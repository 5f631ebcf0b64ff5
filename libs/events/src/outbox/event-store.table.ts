// Tables every event-sourced service has in its own schema: the event store, the outbox, the
// idempotency records of its consumers and the dead letters its consumers gave up on.
import { sql, type Generated, type Migration } from 'kysely';

export interface EventsTable {
  position: Generated<number>;
  stream_id: string;
  version: number;
  event_id: string;
  type: string;
  envelope: string;
  recorded_at: Generated<Date>;
}

export interface OutboxTable {
  id: Generated<number>;
  event_id: string;
  subject: string;
  payload: string;
  created_at: Generated<Date>;
}

export interface ProcessedEventsTable {
  consumer: string;
  event_id: string;
  processed_at: Generated<Date>;
}

export interface DeadLettersTable {
  id: Generated<number>;
  consumer: string;
  subject: string;
  stream_sequence: number;
  deliveries: number;
  reason: string;
  payload: string;
  recorded_at: Generated<Date>;
  /** The last replay (capstan admin dlq replay): when, by whom, and what came of it. */
  replayed_at: Date | null;
  replayed_by: string | null;
  replay_outcome: string | null;
  replays: Generated<number>;
}

export interface EventStoreDatabase {
  events: EventsTable;
  outbox: OutboxTable;
  processed_events: ProcessedEventsTable;
  dead_letters: DeadLettersTable;
}

/** Merge into a service's own migrations: `{ ...eventStoreMigrations('repo'), ...repoMigrations }`. */
export function eventStoreMigrations(schema: string): Record<string, Migration> {
  return {
    '2026_11_20_0000_event_store': {
      async up(db) {
        const s = db.schema.withSchema(schema);
        await s
          .createTable('events')
          .addColumn('position', 'bigserial', (c) => c.primaryKey())
          .addColumn('stream_id', 'text', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('event_id', 'text', (c) => c.notNull().unique())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('envelope', 'jsonb', (c) => c.notNull())
          .addColumn('recorded_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
          // The optimistic-concurrency guard: two writers cannot both append version N.
          .addUniqueConstraint('events_stream_version', ['stream_id', 'version'])
          .execute();
        await s
          .createTable('outbox')
          .addColumn('id', 'bigserial', (c) => c.primaryKey())
          .addColumn('event_id', 'text', (c) => c.notNull())
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('payload', 'text', (c) => c.notNull())
          .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
          .execute();
        await s
          .createTable('processed_events')
          .addColumn('consumer', 'text', (c) => c.notNull())
          .addColumn('event_id', 'text', (c) => c.notNull())
          .addColumn('processed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
          .addPrimaryKeyConstraint('processed_events_pk', ['consumer', 'event_id'])
          .execute();
        await s
          .createTable('dead_letters')
          .addColumn('id', 'bigserial', (c) => c.primaryKey())
          .addColumn('consumer', 'text', (c) => c.notNull())
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('stream_sequence', 'bigint', (c) => c.notNull())
          .addColumn('deliveries', 'integer', (c) => c.notNull())
          .addColumn('reason', 'text', (c) => c.notNull())
          .addColumn('payload', 'text', (c) => c.notNull())
          .addColumn('recorded_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
          .addUniqueConstraint('dead_letters_once', ['consumer', 'subject', 'stream_sequence'])
          .execute();
      },
    },
    // Operators replay dead letters (consumers/dead-letter-replay.ts); the row keeps the last outcome.
    '2026_11_26_0201_dead_letter_replays': {
      async up(db) {
        await db.schema
          .withSchema(schema)
          .alterTable('dead_letters')
          .addColumn('replayed_at', 'timestamptz')
          .addColumn('replayed_by', 'text')
          .addColumn('replay_outcome', 'text')
          .addColumn('replays', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema
          .withSchema(schema)
          .createIndex('dead_letters_recorded')
          .on('dead_letters')
          .column('recorded_at')
          .execute();
      },
    },
  };
}
