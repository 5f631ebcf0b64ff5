// Dead letters as operators see them. Each service owns the dead letters of its consumers, in the
// table this library defines in the service's own schema (`<schema>.dead_letters`); nobody else
// writes them. Two things cross service lines, both through this library:
//  - reading: the api lists the rows of every owner for `capstan admin dlq list` (listDeadLetters),
//    read-only, through the library's table definition, never a service's own tables;
//  - replaying: the api, after its RBAC check, publishes io.capstan.cmd.deadletter.replay.v1; the
//    owning service (startDeadLetterReplay, started by startBackbone) hands the recorded message to
//    the consumer that gave up on it, and records the outcome on the row. The message is handled by
//    the owner's code with the owner's rights, exactly as a delivery would be.
import { sql, type Kysely } from 'kysely';
import { NotFoundError, UnavailableError } from '@capstan/service';
import type { Bus } from '../bus/bus.js';
import type { RunningConsumer } from '../bus/consumer.js';
import { deadLetterOwners, deadLetterReplay, type DeadLetterOwner } from '../catalog/dead-letters.js';
import type { EventStoreDatabase } from '../outbox/event-store.table.js';

export interface DeadLetterView {
  service: DeadLetterOwner;
  id: number;
  consumer: string;
  subject: string;
  streamSequence: number;
  deliveries: number;
  reason: string;
  payload: string;
  recordedAt: Date;
  replayedAt: Date | null;
  replayedBy: string | null;
  replayOutcome: string | null;
  replays: number;
}

export interface DeadLetterQuery {
  /** One owner, or every one. */
  service?: DeadLetterOwner | undefined;
  consumer?: string | undefined;
  /** Rows recorded before this time (paging, newest first). */
  before?: Date | undefined;
  limit: number;
}

/** The dead letters of every owner whose table exists (a service not started yet has none), newest first. */
export async function listDeadLetters<DB>(anyDb: Kysely<DB>, q: DeadLetterQuery): Promise<DeadLetterView[]> {
  const db = anyDb as unknown as Kysely<unknown>;
  const present = await sql<{ schema: string }>`
    select table_schema as schema from information_schema.tables
     where table_name = 'dead_letters' and table_schema = any(${[...deadLetterOwners]})`.execute(db);
  const owners = deadLetterOwners.filter(
    (o) => (!q.service || q.service === o) && present.rows.some((r) => r.schema === o),
  );
  if (owners.length === 0) return [];
  const selects = owners.map(
    (o) => sql`
      select ${o}::text as service, id, consumer, subject, stream_sequence, deliveries, reason, payload,
             recorded_at, replayed_at, replayed_by, replay_outcome, replays
        from ${sql.table(`${o}.dead_letters`)}
       where (${q.consumer ?? null}::text is null or consumer = ${q.consumer ?? null})
         and (${q.before ?? null}::timestamptz is null or recorded_at < ${q.before ?? null})`,
  );
  const rows = await sql<Record<string, unknown>>`
    ${sql.join(selects, sql` union all `)} order by recorded_at desc, id desc limit ${q.limit}`.execute(db);
  return rows.rows.map((r) => ({
    service: r.service as DeadLetterOwner,
    id: Number(r.id),
    consumer: String(r.consumer),
    subject: String(r.subject),
    streamSequence: Number(r.stream_sequence),
    deliveries: Number(r.deliveries),
    reason: String(r.reason),
    payload: String(r.payload),
    recordedAt: r.recorded_at as Date,
    replayedAt: (r.replayed_at as Date | null) ?? null,
    replayedBy: (r.replayed_by as string | null) ?? null,
    replayOutcome: (r.replay_outcome as string | null) ?? null,
    replays: Number(r.replays ?? 0),
  }));
}

/** `<service>:<id>`, the id operators use. */
export function parseDeadLetterId(text: string): { service: DeadLetterOwner; id: number } | undefined {
  const m = /^([a-z]+):([1-9][0-9]{0,15})$/.exec(text);
  if (!m || !(deadLetterOwners as readonly string[]).includes(m[1]!)) return undefined;
  const id = Number(m[2]);
  return Number.isSafeInteger(id) ? { service: m[1] as DeadLetterOwner, id } : undefined;
}

/**
 * The owning service's side of a replay: a consumer of the replay command (durable
 * `<service>-dlq-replay`) that takes the commands for this service, hands the row's message to the
 * consumer named on the row, and records when, who and what came of it. A consumer that is not
 * running here yet (start-up) is retried; a row that does not exist is a dead letter itself.
 */
export function startDeadLetterReplay<DB>(
  bus: Bus,
  anyDb: Kysely<DB>,
  options: { service: DeadLetterOwner; schema: string },
): Promise<RunningConsumer> {
  const db = anyDb as unknown as Kysely<EventStoreDatabase>;
  return bus.consume({
    durable: `${options.service}-dlq-replay`,
    events: [deadLetterReplay],
    // A replay that fails is recorded on the row, not retried: the operator decides again.
    handle: async (event) => {
      if (event.data.service !== options.service) return;
      const row = await db
        .withSchema(options.schema)
        .selectFrom('dead_letters')
        .select(['id', 'consumer', 'subject', 'payload'])
        .where('id', '=', event.data.id)
        .executeTakeFirst();
      if (!row) throw new NotFoundError(`no dead letter ${options.service}:${event.data.id}`);
      const consumer = bus.consumerNamed(row.consumer);
      if (!consumer)
        throw new UnavailableError(`consumer ${row.consumer} is not running in this replica yet`);
      let outcome = 'handled';
      try {
        await consumer.replay(row.payload, row.subject);
      } catch (err) {
        outcome = `failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 2000);
      }
      await db
        .withSchema(options.schema)
        .updateTable('dead_letters')
        .set((eb) => ({
          replayed_at: new Date(),
          replayed_by: event.actor,
          replay_outcome: outcome,
          replays: eb('replays', '+', 1),
        }))
        .where('id', '=', row.id)
        .execute();
    },
  });
}
