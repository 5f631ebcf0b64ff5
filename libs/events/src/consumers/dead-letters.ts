// Dead letters are also recorded in PostgreSQL, in the consuming service's schema, so operators can
// list and replay them (`capstan admin dlq`, consumers/dead-letter-replay.ts).
import type { Kysely } from 'kysely';
import type { DeadLetterStore } from '../bus/consumer.js';
import type { EventStoreDatabase } from '../outbox/event-store.table.js';

/**
 * PostgreSQL text cannot hold NUL: a message with one (found by catalog-fuzz.int.test.ts) could
 * never be recorded, so it was nak'ed and delivered again without end. It is kept as `\u0000`.
 */
function storable(text: string): string {
  return text.replaceAll('\u0000', '\\u0000');
}

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
          reason: storable(entry.reason),
          payload: storable(entry.payload),
        })
        .onConflict((oc) => oc.constraint('dead_letters_once').doNothing())
        .execute();
    },
  };
}
