// Key rotation for sealed rows at rest. Every table that holds sealed values keeps them in the same
// three columns, `key_id text, nonce bytea, ciphertext bytea`, beside a text primary key from which
// the row's bound identity follows. After the operator adds a key and makes it active, the owning
// service calls `resealRows` at start-up: each row sealed with another key is opened and sealed again
// with the active one, in its own short transaction with the row locked (replicas starting together
// re-seal each row once). Afterwards the old key can leave the keyring.
import { sql, type Kysely } from 'kysely';
import type { Logger } from '@capstan/service';
import type { Keyring } from './keyring.js';
import { needsResealing, resealWithActiveKey, type Sealed } from './seal.js';

export interface SealedTable {
  /** What the rows are, for logs: `cluster credentials`. */
  name: string;
  schema: string;
  table: string;
  /** The text primary-key column. */
  idColumn: string;
  /** The identity a row's value is bound to, from its id (the same string its reader opens with). */
  boundTo: (id: string) => string;
  /** How a row is named in errors (default: its bound identity). */
  label?: (id: string) => string;
}

/** Re-seals every row of `t` sealed with a key other than the active one; returns how many. */
export async function resealRows<DB>(db: Kysely<DB>, keyring: Keyring, t: SealedTable): Promise<number> {
  const table = sql.table(`${t.schema}.${t.table}`);
  const id = sql.ref(t.idColumn);
  const stale = await sql<{ id: string }>`
    select ${id} as id from ${table} where key_id <> ${keyring.activeKeyId} order by ${id}`.execute(db);
  let resealed = 0;
  for (const { id: rowId } of stale.rows) {
    const done = await db.transaction().execute(async (trx) => {
      const found = await sql<{ key_id: string; nonce: Buffer; ciphertext: Buffer }>`
        select key_id, nonce, ciphertext from ${table} where ${id} = ${rowId} for update`.execute(trx);
      const row = found.rows[0];
      // Gone, or re-sealed by a replica that started at the same time.
      if (!row || !needsResealing(keyring, { keyId: row.key_id })) return false;
      const current: Sealed = { keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext };
      const next = resealWithActiveKey(keyring, t.boundTo(rowId), current, t.label?.(rowId));
      await sql`
        update ${table} set key_id = ${next.keyId}, nonce = ${next.nonce}, ciphertext = ${next.ciphertext}
        where ${id} = ${rowId}`.execute(trx);
      return true;
    });
    if (done) resealed += 1;
  }
  return resealed;
}

/** `resealRows` for each table in turn; the counts by table name (for a log line: counts only). */
export async function resealTables<DB>(
  db: Kysely<DB>,
  keyring: Keyring,
  tables: readonly SealedTable[],
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const t of tables) counts[t.name] = await resealRows(db, keyring, t);
  return counts;
}

/**
 * What a service runs at start-up, before it serves: re-seals its tables and logs how many rows of
 * each were re-sealed (counts and the active key id only) when there were any.
 */
export async function resealAtStartup<DB>(
  db: Kysely<DB>,
  keyring: Keyring,
  tables: readonly SealedTable[],
  logger: Pick<Logger, 'info'>,
): Promise<Record<string, number>> {
  const resealed = await resealTables(db, keyring, tables);
  if (Object.values(resealed).some((n) => n > 0))
    logger.info({ resealed, activeKeyId: keyring.activeKeyId }, 'sealed rows re-sealed with the active key');
  return resealed;
}
