// Appending to and verifying the audit trail.
import { sql, type Kysely, type Transaction } from 'kysely';
import { migrateToLatest } from '../migrate.js';
import { auditMigrations } from './migrations.js';
import { chainHash, GENESIS_HASH } from './hash-chain.js';
import type { AuditDatabase, AuditRow, AuditTableName, StoredAuditRow } from './audit.table.js';

export async function migrateAudit<DB>(db: Kysely<DB>): Promise<void> {
  await migrateToLatest(db, { schema: 'audit', migrations: auditMigrations });
}

const jsonColumns = new Set(['project_chain', 'rules_considered', 'candidates']);

function contentOf(row: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, hash: _hash, prev_hash: _prev, ...content } = row;
  return content;
}

async function appendInTransaction<T extends AuditTableName>(
  trx: Transaction<unknown>,
  table: T,
  row: AuditRow<T>,
): Promise<StoredAuditRow<T>> {
  // One writer per table at a time extends the chain; the lock is released at commit.
  await sql`select pg_advisory_xact_lock(hashtext(${`audit.${table}`}))`.execute(trx);
  const last = await sql<{ hash: string }>`
    select hash from ${sql.table(`audit.${table}`)} order by id desc limit 1`.execute(trx);
  const prevHash = last.rows[0]?.hash ?? GENESIS_HASH;
  // Millisecond precision: what timestamptz gives back must hash the same as what was written.
  const occurredAt = new Date(Math.floor((row.occurred_at ?? new Date()).getTime()));
  const content: Record<string, unknown> = {
    ...(row as unknown as Record<string, unknown>),
    occurred_at: occurredAt,
  };
  const hash = chainHash(table, prevHash, content);
  const values = Object.fromEntries(
    Object.entries({ ...content, prev_hash: prevHash, hash }).map(([k, v]) => [
      k,
      jsonColumns.has(k) ? JSON.stringify(v) : v,
    ]),
  );
  const inserted = await (trx as unknown as Kysely<AuditDatabase>)
    .withSchema('audit')
    .insertInto(table)
    .values(values as never)
    .returning('id')
    .executeTakeFirstOrThrow();
  return {
    ...(content as unknown as AuditRow<T>),
    id: inserted.id,
    occurred_at: occurredAt,
    prev_hash: prevHash,
    hash,
  } as StoredAuditRow<T>;
}

/**
 * Appends one row to an audit table. Given a transaction, the row commits (or not) with the caller's
 * other writes; given a plain connection, it commits on its own.
 */
export async function appendAudit<T extends AuditTableName>(
  db: Kysely<unknown> | Transaction<unknown>,
  table: T,
  row: AuditRow<T>,
): Promise<StoredAuditRow<T>> {
  if (db.isTransaction) return appendInTransaction(db as Transaction<unknown>, table, row);
  return db.transaction().execute((trx) => appendInTransaction(trx, table, row));
}

export interface ChainVerification {
  table: AuditTableName;
  ok: boolean;
  checked: number;
  /** The first row whose hash or link does not hold, and why. */
  broken?: { id: number; reason: string };
}

/** Walks a table in id order and recomputes every link of the chain. */
export async function verifyAuditChain(
  db: Kysely<unknown>,
  table: AuditTableName,
  options: { batchSize?: number } = {},
): Promise<ChainVerification> {
  const batchSize = options.batchSize ?? 1000;
  let prevHash = GENESIS_HASH;
  let lastId = 0;
  let checked = 0;
  for (;;) {
    const rows = (await (db as Kysely<AuditDatabase>)
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
