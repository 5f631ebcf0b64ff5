// The durable queue of sync operations in PostgreSQL. A request becomes a row once (its
// operationId is the key, so redelivery is harmless); workers claim rows with SKIP LOCKED; a partial
// unique index allows one running operation per Application across every replica; a lease lets
// another replica take over the syncs of one that died; and the terminal event is appended in the
// same transaction that moves the row out of `running`, guarded by the attempt number, so every
// operation gets exactly one terminal event however often it is delivered or retried.
import { sql, type Transaction } from 'kysely';
import { appendToStream, streamVersion, type Envelope, type EventStoreDatabase } from '@capstan/events';
import type { OperationRow, SyncDb, SyncDbOrTrx, SyncTrx } from '../sync.table.js';
import type { SyncTrigger } from './trigger.js';
import { currentTraceparent } from '@capstan/service';

export interface ClaimedOperation {
  operationId: string;
  appNamespace: string;
  appName: string;
  request: unknown;
  triggerEventId: string;
  actor: string;
  correlationId: string | null;
  attempt: number;
  /** syncPolicy.retry: retries scheduled so far (0: the first try, or its unreachable-cluster requeues). */
  retries: number;
  /** The attempt count when the last retry was scheduled (0 before any). */
  retryBase: number;
  /** The Application as the attempt that scheduled the last retry saw it. */
  appFingerprint: string | null;
  /** W3C traceparent of the span that queued it: the attempt's span continues that trace. */
  traceParent: string | null;
}

export function operationStream(operationId: string): string {
  return `sync-operations/${operationId}`;
}

/**
 * Records a request; returns false when this operationId was seen before. `trigger` says what
 * started it (sync.started carries it; `capstan app history` shows it); absent, the request's own
 * `trigger` applies, else `{ kind: 'user', actor }`.
 */
export async function enqueueOperation(
  db: SyncDbOrTrx,
  op: {
    operationId: string;
    appNamespace: string;
    appName: string;
    request: unknown;
    triggerEventId: string;
    actor: string;
    correlationId: string | null;
    trigger?: SyncTrigger | undefined;
  },
): Promise<boolean> {
  const request =
    op.trigger && op.request !== null && typeof op.request === 'object'
      ? { ...(op.request as Record<string, unknown>), trigger: op.trigger }
      : op.request;
  const res = await db
    .withSchema('sync')
    .insertInto('operations')
    .values({
      operation_id: op.operationId,
      app_namespace: op.appNamespace,
      app_name: op.appName,
      status: 'queued',
      request: JSON.stringify(request),
      trigger_event_id: op.triggerEventId,
      actor: op.actor,
      correlation_id: op.correlationId,
      trace_parent: currentTraceparent() ?? null,
    })
    .onConflict((oc) => oc.column('operation_id').doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * Claims the oldest runnable operation of an Application that has none running (or whose runner's
 * lease expired), in one statement. Returns undefined when there is nothing to do right now. The
 * `sync.started` event is the runner's to append (with its decision, see sync-runner.ts), so a claim
 * costs one round trip.
 */
export async function claimOperation(db: SyncDb, leaseMs: number): Promise<ClaimedOperation | undefined> {
  try {
    const claimed = await sql<OperationRow & { attempts: number; retries: number; retry_base: number }>`
      with picked as (
        select o.operation_id from sync.operations o
        where o.not_before <= now()
          and (o.status = 'queued' or (o.status = 'running' and o.lease_until < now()))
          and not exists (
            select 1 from sync.operations r
            where r.app_namespace = o.app_namespace and r.app_name = o.app_name
              and r.operation_id <> o.operation_id
              and ((r.status = 'running' and r.lease_until >= now())
                or (r.status = 'queued' and r.created_at < o.created_at)))
        order by o.created_at
        limit 1
        for update of o skip locked)
      update sync.operations u
      set status = 'running', attempts = u.attempts + 1,
          lease_until = now() + make_interval(secs => ${leaseMs / 1000})
      from picked
      where u.operation_id = picked.operation_id
      returning u.*`.execute(db);
    const row = claimed.rows[0];
    if (!row) return undefined;
    return {
      operationId: row.operation_id,
      appNamespace: row.app_namespace,
      appName: row.app_name,
      request: row.request,
      triggerEventId: row.trigger_event_id,
      actor: row.actor,
      correlationId: row.correlation_id,
      attempt: row.attempts,
      retries: row.retries,
      retryBase: row.retry_base,
      appFingerprint: row.app_fingerprint,
      traceParent: (row as unknown as { trace_parent: string | null }).trace_parent,
    };
  } catch (err) {
    // Two replicas picked different operations of one Application at once: the unique index let one
    // win; the other simply finds nothing to do this round.
    if ((err as { code?: string }).code === '23505') return undefined;
    throw err;
  }
}

/**
 * Milliseconds (by the database's clock) until an operation that nothing wakes the workers for can
 * be claimed: a retry's not_before, or the lease of a running one (taken over if its replica died);
 * undefined when there is none. Queued operations due now but waiting behind their Application's
 * running one are not counted: its end wakes the workers.
 */
export async function nextDueMs(db: SyncDb): Promise<number | undefined> {
  const res = await sql<{ ms: number | null }>`
    select extract(epoch from (min(t) - now())) * 1000 as ms from (
      select min(not_before) as t from sync.operations where status = 'queued' and not_before > now()
      union all
      select min(lease_until) from sync.operations where status = 'running') due`.execute(db);
  const ms = res.rows[0]?.ms;
  return ms === null || ms === undefined ? undefined : Math.max(0, Number(ms));
}

/** Keeps the lease while a sync runs; false when the operation is no longer ours. */
export async function renewLease(db: SyncDb, op: ClaimedOperation, leaseMs: number): Promise<boolean> {
  const res = await db
    .withSchema('sync')
    .updateTable('operations')
    .set({ lease_until: sql`now() + make_interval(secs => ${leaseMs / 1000})` })
    .where('operation_id', '=', op.operationId)
    .where('status', '=', 'running')
    .where('attempts', '=', op.attempt)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Puts a running operation back in the queue after a retryable failure (target cluster down).
 * Returns false when the operation is not ours any more.
 */
export async function requeueOperation(
  db: SyncDbOrTrx,
  op: ClaimedOperation,
  delayMs: number,
  reason: string,
  retry?: { appFingerprint: string },
): Promise<boolean> {
  const res = await db
    .withSchema('sync')
    .updateTable('operations')
    .set({
      status: 'queued',
      lease_until: null,
      reason,
      not_before: sql`now() + make_interval(secs => ${delayMs / 1000})`,
      // A policy retry is counted, from this attempt, with the Application as this attempt saw it.
      ...(retry
        ? { retries: op.retries + 1, retry_base: op.attempt, app_fingerprint: retry.appFingerprint }
        : {}),
    })
    .where('operation_id', '=', op.operationId)
    .where('status', '=', 'running')
    .where('attempts', '=', op.attempt)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * syncPolicy.retry: puts a failed running operation back in the queue for its next retry after
 * `delayMs`, counting it, with the Application as this attempt saw it. Returns false when the
 * operation is not ours any more.
 */
export function scheduleRetry(
  db: SyncDbOrTrx,
  op: ClaimedOperation,
  delayMs: number,
  reason: string,
  appFingerprint: string,
): Promise<boolean> {
  return requeueOperation(db, op, delayMs, reason, { appFingerprint });
}

/** When the Application's last operation before this one ended (Prune=confirm's approvals count from then). */
export async function previousOperationEnd(db: SyncDbOrTrx, op: ClaimedOperation): Promise<Date | undefined> {
  const row = await db
    .withSchema('sync')
    .selectFrom('operations')
    .select((eb) => eb.fn.max('finished_at').as('at'))
    .where('app_namespace', '=', op.appNamespace)
    .where('app_name', '=', op.appName)
    .where('operation_id', '<>', op.operationId)
    .executeTakeFirst();
  return row?.at ? new Date(row.at as unknown as string) : undefined;
}

/**
 * Moves a running operation to its terminal status and appends `events` (resource results and
 * the one terminal event) in the same transaction. Returns false, appending nothing, when the
 * operation is not ours any more (finished already, or taken over after our lease expired).
 */
export async function finishOperation(
  db: SyncDb,
  op: ClaimedOperation,
  status: 'succeeded' | 'failed',
  reason: string,
  events: Envelope[],
  inTransaction?: (trx: SyncTrx) => Promise<void>,
): Promise<boolean> {
  return db
    .transaction()
    .execute((trx) => finishOperationIn(trx, op, status, reason, events, undefined, inTransaction));
}

/**
 * finishOperation inside the caller's transaction (the runner's group commit). `knownVersion` is
 * the operation stream's version when the caller knows it (read from the stream otherwise).
 */
export async function finishOperationIn(
  trx: SyncTrx,
  op: ClaimedOperation,
  status: 'succeeded' | 'failed',
  reason: string,
  events: Envelope[],
  knownVersion: number | undefined,
  inTransaction?: (trx: SyncTrx) => Promise<void>,
): Promise<boolean> {
  const res = await trx
    .withSchema('sync')
    .updateTable('operations')
    .set({ status, reason, finished_at: new Date(), lease_until: null })
    .where('operation_id', '=', op.operationId)
    .where('status', '=', 'running')
    .where('attempts', '=', op.attempt)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return false;
  await inTransaction?.(trx);
  await appendOperationEvents(trx, op.operationId, events, knownVersion);
  return true;
}

/**
 * Appends to an operation's stream (with their outbox rows) at `knownVersion`, or at the stream's
 * current version when the caller does not know it. Optimistic concurrency still guards the append.
 * Returns the stream's version after the append.
 */
export async function appendOperationEvents(
  trx: SyncTrx,
  operationId: string,
  events: Envelope[],
  knownVersion?: number,
): Promise<number | undefined> {
  if (events.length === 0) return knownVersion;
  const stream = operationStream(operationId);
  const es = trx as unknown as Transaction<EventStoreDatabase>;
  const version = knownVersion ?? (await streamVersion(es, 'sync', stream));
  await appendToStream(es, { schema: 'sync', streamId: stream, expectedVersion: version, events });
  return version + events.length;
}
