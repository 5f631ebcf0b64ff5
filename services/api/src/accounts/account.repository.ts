// Local accounts, their API tokens and revoked token ids.
import type { Kysely, Transaction } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';

type Db = Kysely<ApiDatabase> | Transaction<ApiDatabase>;

export interface AccountRecord {
  name: string;
  passwordHash: string | null;
  enabled: boolean;
  capabilities: string[];
  groups: string[];
  createdAt: Date;
  passwordChangedAt: Date;
}

export interface ApiTokenRecord {
  id: string;
  account: string;
  issuedAt: Date;
  expiresAt: Date | null;
}

function toAccount(r: ApiDatabase['accounts']): AccountRecord {
  return {
    name: r.name,
    passwordHash: r.password_hash,
    enabled: r.enabled,
    capabilities: r.capabilities as string[],
    groups: r.groups as string[],
    createdAt: r.created_at,
    passwordChangedAt: r.password_changed_at,
  };
}

export async function findAccount(db: Db, name: string): Promise<AccountRecord | undefined> {
  const row = await db
    .withSchema('api')
    .selectFrom('accounts')
    .selectAll()
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? toAccount(row) : undefined;
}

export async function listAccounts(db: Db): Promise<AccountRecord[]> {
  const rows = await db.withSchema('api').selectFrom('accounts').selectAll().orderBy('name').execute();
  return rows.map(toAccount);
}

export async function countAccounts(db: Db): Promise<number> {
  const row = await db
    .withSchema('api')
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Inserts the account; returns false when the name is taken. */
export async function insertAccount(
  db: Db,
  a: Omit<AccountRecord, 'createdAt' | 'passwordChangedAt'>,
): Promise<boolean> {
  const now = new Date();
  const res = await db
    .withSchema('api')
    .insertInto('accounts')
    .values({
      name: a.name,
      password_hash: a.passwordHash,
      enabled: a.enabled,
      capabilities: JSON.stringify(a.capabilities),
      groups: JSON.stringify(a.groups),
      created_at: now,
      password_changed_at: now,
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function updatePasswordHash(db: Db, name: string, hash: string): Promise<void> {
  await db
    .withSchema('api')
    .updateTable('accounts')
    .set({ password_hash: hash, password_changed_at: new Date() })
    .where('name', '=', name)
    .execute();
}

export async function deleteAccount(db: Db, name: string): Promise<boolean> {
  const res = await db.withSchema('api').deleteFrom('accounts').where('name', '=', name).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

export async function insertApiToken(db: Db, t: ApiTokenRecord): Promise<boolean> {
  const res = await db
    .withSchema('api')
    .insertInto('api_tokens')
    .values({ id: t.id, account: t.account, issued_at: t.issuedAt, expires_at: t.expiresAt })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function listApiTokens(db: Db, account: string): Promise<ApiTokenRecord[]> {
  const rows = await db
    .withSchema('api')
    .selectFrom('api_tokens')
    .selectAll()
    .where('account', '=', account)
    .orderBy('issued_at')
    .execute();
  return rows.map((r) => ({ id: r.id, account: r.account, issuedAt: r.issued_at, expiresAt: r.expires_at }));
}

export async function deleteApiToken(
  db: Db,
  account: string,
  id: string,
): Promise<ApiTokenRecord | undefined> {
  const row = await db
    .withSchema('api')
    .deleteFrom('api_tokens')
    .where('account', '=', account)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row
    ? { id: row.id, account: row.account, issuedAt: row.issued_at, expiresAt: row.expires_at }
    : undefined;
}

export async function revokeToken(db: Db, jti: string, expiresAt: Date | null): Promise<void> {
  await db
    .withSchema('api')
    .insertInto('revoked_tokens')
    .values({ jti, revoked_at: new Date(), expires_at: expiresAt })
    .onConflict((oc) => oc.column('jti').doNothing())
    .execute();
}

/** Revocations since `since` (all live ones when undefined). */
export async function revokedSince(
  db: Db,
  since: Date | undefined,
): Promise<{ jti: string; revokedAt: Date }[]> {
  let q = db.withSchema('api').selectFrom('revoked_tokens').select(['jti', 'revoked_at']);
  if (since) q = q.where('revoked_at', '>', since);
  else q = q.where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', new Date())]));
  const rows = await q.execute();
  return rows.map((r) => ({ jti: r.jti, revokedAt: r.revoked_at }));
}
