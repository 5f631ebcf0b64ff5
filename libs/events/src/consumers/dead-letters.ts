// Dead letters are also recorded in PostgreSQL, in the consuming service's schema, so operators can
// list and replay them with SQL.
import type { Kysely } from 'kysely';
import type { DeadLetterStore } from '../bus/consumer.js';
import type { EventStoreDatabase } from '../outbox/event-store.table.js';

export function postgresDeadLetters<DB>(anyDb: Kysely<DB>, schema: string): DeadLetterStore {
  const db = anyDb as unknown as Kysely<EventStoreDatabase>;
  return {
    async record(entry) {
      await db
        .withSchema(schema)
        .insertInto('dead_letters')
        .values({
          consumer: entry.consumer,
          subject: entry.subject,
          stream_sequence: entry.streamSequence,
          deliveries: entry.deliveries,
          reason: entry.reason,
          payload: entry.payload,
        })
        .onConflict((oc) => oc.constraint('dead_letters_once').doNothing())
        .execute();
    },
  };
}
