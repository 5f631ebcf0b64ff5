// Data access for repo.credentials. Functions take a Kysely handle or a transaction, so callers
// put the credential change and its audit row in one transaction.
import type { Insertable, Kysely, Transaction, Updateable } from 'kysely';
import type { CredentialMetadata } from './credential.js';
import type { CredentialRow, CredentialTable, RepoDatabase } from './credential.table.js';

export type RepoDb = Kysely<RepoDatabase> | Transaction<RepoDatabase>;

const schema = (db: RepoDb) => db.withSchema('repo');

/** Every credential for a URL (normalised form), in creation order. */
export async function credentialsForUrl(db: RepoDb, normalizedUrl: string): Promise<CredentialRow[]> {
  return schema(db)
    .selectFrom('credentials')
    .selectAll()
    .where('normalized_url', '=', normalizedUrl)
    .orderBy('seq')
    .execute();
}

export async function listCredentialRows(
  db: RepoDb,
  filter: { project?: string } = {},
): Promise<CredentialRow[]> {
  let query = schema(db).selectFrom('credentials').selectAll();
  if (filter.project !== undefined) query = query.where('project', '=', filter.project);
  return query.orderBy('seq').execute();
}

/** One credential by name; `forUpdate` locks its row for the rest of the caller's transaction. */
export async function credentialByName(
  db: RepoDb,
  name: string,
  opts: { forUpdate?: boolean } = {},
): Promise<CredentialRow | undefined> {
  const query = schema(db).selectFrom('credentials').selectAll().where('name', '=', name);
  return (opts.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** One credential by id; `forUpdate` locks its row for the rest of the caller's transaction. */
export async function credentialById(
  db: RepoDb,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<CredentialRow | undefined> {
  const query = schema(db).selectFrom('credentials').selectAll().where('id', '=', id);
  return (opts.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

export async function insertCredential(db: RepoDb, row: Insertable<CredentialTable>): Promise<CredentialRow> {
  return schema(db).insertInto('credentials').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateCredential(
  db: RepoDb,
  id: string,
  patch: Updateable<CredentialTable>,
): Promise<CredentialRow> {
  return schema(db)
    .updateTable('credentials')
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteCredential(db: RepoDb, id: string): Promise<void> {
  await schema(db).deleteFrom('credentials').where('id', '=', id).execute();
}

export function toMetadata(row: CredentialRow): CredentialMetadata {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    project: row.project,
    type: row.type,
    displayName: row.display_name,
    username: row.username,
    hasPassword: row.has_password,
    hasSshPrivateKey: row.has_ssh_private_key,
    insecure: row.insecure,
    enableOci: row.enable_oci,
    insecureOciForceHttp: row.insecure_oci_force_http,
    origin: row.origin,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
