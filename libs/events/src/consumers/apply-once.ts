// Idempotent consumers: an event's effect and the `(consumer, event id)` record commit in one
// transaction, so a redelivered event finds its record and changes nothing.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Envelope } from '../envelope/envelope.js';
import type { EventStoreDatabase } from '../outbox/event-store.table.js';

export interface ApplyOnceOptions {
  schema: string;
  consumer: string;
}

/** Runs `effect` unless this consumer already applied the event; returns whether it ran. */
export async function applyOnce<DB extends EventStoreDatabase>(
  db: Kysely<DB>,
  options: ApplyOnceOptions & { eventId: string },
  effect: (trx: Transaction<DB>) => Promise<void>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const inserted = await sql<{ event_id: string }>`
      insert into ${sql.table(`${options.schema}.processed_events`)} (consumer, event_id)
      values (${options.consumer}, ${options.eventId})
      on conflict do nothing returning event_id`.execute(trx);
    if (inserted.rows.length === 0) return false;
    await effect(trx);
    return true;
  });
}

/**
 * The batch form: records every event of the batch and applies the effect to those not seen before,
 * in one transaction. Used by consumers whose effects are cheap and many (projections).
 */
export async function applyBatchOnce<DB extends EventStoreDatabase, E extends Envelope>(
  db: Kysely<DB>,
  options: ApplyOnceOptions,
  events: readonly E[],
  effect: (trx: Transaction<DB>, fresh: readonly E[]) => Promise<void>,
): Promise<E[]> {
  if (events.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    const ids = events.map((e) => e.id);
    const inserted = await sql<{ event_id: string }>`
      insert into ${sql.table(`${options.schema}.processed_events`)} (consumer, event_id)
      select ${options.consumer}, unnest(${ids}::text[])
      on conflict do nothing returning event_id`.execute(trx);
    const freshIds = new Set(inserted.rows.map((r) => r.event_id));
    const fresh = events.filter((e) => freshIds.has(e.id));
    if (fresh.length > 0) await effect(trx, fresh);
    return fresh;
  });
}
