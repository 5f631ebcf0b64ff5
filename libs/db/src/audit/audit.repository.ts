// Appending to and verifying the audit trail.
import { sql, type Kysely, type Transaction } from 'kysely';
import { migrateToLatest } from '../migrate.js';
import { auditMigrations } from './migrations.js';
import { chainHash, GENESIS_HASH } from './hash-chain.js';
import type { AuditDatabase, AuditRow, AuditTableName, StoredAuditRow } from './audit.table.js';

export async function migrateAudit<DB>(db: Kysely<DB>): Promise<void> {
  await migrateToLatest(db, { schema: 'audit', migrations: auditMigrations });
}

const jsonColumns = new Set([
  'project_chain',
  'rules_considered',
  'candidates',
  'changes',
  'warnings',
  'applications',
  'event_ids',
]);

/**
 * Columns added after rows were already chained: a row written before a column existed hashed
 * without it, so an empty value of such a column is left out of the content (a row written with a
 * value hashes with it).
 */
const laterColumns = ['attempt'];

function contentOf(row: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, hash: _hash, prev_hash: _prev, ...content } = row;
  for (const c of laterColumns) if (content[c] === null) delete content[c];
  return content;
}

async function appendInTransaction<T extends AuditTableName>(
  trx: Transaction<unknown>,
  table: T,
  rows: readonly AuditRow<T>[],
): Promise<StoredAuditRow<T>[]> {
  if (rows.length === 0) return [];
  // One writer per table at a time extends the chain; the lock is released at commit.
  await sql`select pg_advisory_xact_lock(hashtext(${`audit.${table}`}))`.execute(trx);
  const last = await sql<{ hash: string }>`
    select hash from ${sql.table(`audit.${table}`)} order by id desc limit 1`.execute(trx);
  let prevHash = last.rows[0]?.hash ?? GENESIS_HASH;
  const chained = rows.map((row) => {
    // Millisecond precision: what timestamptz gives back must hash the same as what was written.
    const occurredAt = new Date(Math.floor((row.occurred_at ?? new Date()).getTime()));
    const content: Record<string, unknown> = {
      ...(row as unknown as Record<string, unknown>),
      occurred_at: occurredAt,
    };
    const hash = chainHash(table, prevHash, content);
    const stored = { content, occurredAt, prevHash, hash };
    prevHash = hash;
    return stored;
  });
  // Rows go in one statement, in order: ids are assigned in VALUES order, so the chain follows id.
  const inserted = await (trx as unknown as Kysely<AuditDatabase>)
    .withSchema('audit')
    .insertInto(table)
    .values(
      chained.map(
        (c) =>
          Object.fromEntries(
            Object.entries({ ...c.content, prev_hash: c.prevHash, hash: c.hash }).map(([k, v]) => [
              k,
              jsonColumns.has(k) ? JSON.stringify(v) : v,
            ]),
          ) as never,
      ),
    )
    .returning('id')
    .execute();
  const ids = inserted.map((r) => r.id).sort((a, b) => a - b);
  return chained.map(
    (c, i) =>
      ({
        ...(c.content as unknown as AuditRow<T>),
        id: ids[i]!,
        occurred_at: c.occurredAt,
        prev_hash: c.prevHash,
        hash: c.hash,
      }) as StoredAuditRow<T>,
  );
}

/**
 * Appends rows to one audit table in order, with one lock, one read of the chain's head and one
 * INSERT. Given a transaction, the rows commit (or not) with the caller's other writes; given a plain
 * connection, they commit on their own.
 */
export async function appendAuditBatch<DB, T extends AuditTableName>(
  db: Kysely<DB> | Transaction<DB>,
  table: T,
  rows: readonly AuditRow<T>[],
): Promise<StoredAuditRow<T>[]> {
  const any = db as unknown as Kysely<unknown>;
  if (any.isTransaction) return appendInTransaction(any as Transaction<unknown>, table, rows);
  return any.transaction().execute((trx) => appendInTransaction(trx, table, rows));
}

/** Appends one row to an audit table (see appendAuditBatch). */
export async function appendAudit<DB, T extends AuditTableName>(
  db: Kysely<DB> | Transaction<DB>,
  table: T,
  row: AuditRow<T>,
): Promise<StoredAuditRow<T>> {
  return (await appendAuditBatch(db, table, [row]))[0]!;
}

export interface ChainVerification {
  table: AuditTableName;
  ok: boolean;
  checked: number;
  /** The first row whose hash or link does not hold, and why. */
  broken?: { id: number; reason: string };
}

/** Walks a table in id order and recomputes every link of the chain. */
export async function verifyAuditChain<DB>(
  db: Kysely<DB>,
  table: AuditTableName,
  options: { batchSize?: number } = {},
): Promise<ChainVerification> {
  const batchSize = options.batchSize ?? 1000;
  let prevHash = GENESIS_HASH;
  let lastId = 0;
  let checked = 0;
  for (;;) {
    const rows = (await (db as unknown as Kysely<AuditDatabase>)
      .withSchema('audit')
      .selectFrom(table)
      .selectAll()
      .where('id', '>', lastId)
      .orderBy('id')
      .limit(batchSize)
      .execute()) as unknown as Record<string, unknown>[];
    if (rows.length === 0) return { table, ok: true, checked };
    for (const row of rows) {
      const id = row.id as number;
      if (row.prev_hash !== prevHash) {
        return {
          table,
          ok: false,
          checked,
          broken: { id, reason: 'prev_hash does not match the previous row (row removed or inserted)' },
        };
      }
      const expected = chainHash(table, prevHash, contentOf(row));
      if (expected !== row.hash) {
        return {
          table,
          ok: false,
          checked,
          broken: { id, reason: 'hash does not match the row content (row altered)' },
        };
      }
      prevHash = row.hash as string;
      lastId = id;
      checked++;
    }
  }
}
