// Project role tokens (api.project_tokens). Rows of a role go with the role: the projects projection
// removes them in the same transaction that removes the role or the project (pruneProjectTokens).
import type { Kysely, Transaction } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';

type Db = Kysely<ApiDatabase> | Transaction<ApiDatabase>;

export interface ProjectTokenRecord {
  project: string;
  role: string;
  id: string;
  /** Seconds since the epoch. */
  iat: number;
  expiresAt: Date | null;
  createdBy: string;
}

const toRecord = (r: ApiDatabase['project_tokens']): ProjectTokenRecord => ({
  project: r.project,
  role: r.role,
  id: r.id,
  iat: Number(r.iat),
  expiresAt: r.expires_at,
  createdBy: r.created_by,
});

/** Inserts the token; false when the role already has a token with this id. */
export async function insertProjectToken(db: Db, t: ProjectTokenRecord): Promise<boolean> {
  const res = await db
    .withSchema('api')
    .insertInto('project_tokens')
    .values({
      project: t.project,
      role: t.role,
      id: t.id,
      iat: t.iat,
      expires_at: t.expiresAt,
      created_by: t.createdBy,
    })
    .onConflict((oc) => oc.columns(['project', 'role', 'id']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function listProjectTokens(
  db: Db,
  project: string,
  role: string,
): Promise<ProjectTokenRecord[]> {
  const rows = await db
    .withSchema('api')
    .selectFrom('project_tokens')
    .selectAll()
    .where('project', '=', project)
    .where('role', '=', role)
    .orderBy('iat')
    .orderBy('id')
    .execute();
  return rows.map(toRecord);
}

export async function findProjectToken(
  db: Db,
  project: string,
  role: string,
  id: string,
): Promise<ProjectTokenRecord | undefined> {
  const row = await db
    .withSchema('api')
    .selectFrom('project_tokens')
    .selectAll()
    .where('project', '=', project)
    .where('role', '=', role)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

/** Deletes the role's tokens with this id, or (id empty) issued at `iat`; returns those deleted. */
export async function deleteProjectTokens(
  db: Db,
  project: string,
  role: string,
  by: { id: string } | { iat: number },
): Promise<ProjectTokenRecord[]> {
  let q = db
    .withSchema('api')
    .deleteFrom('project_tokens')
    .where('project', '=', project)
    .where('role', '=', role);
  q = 'id' in by ? q.where('id', '=', by.id) : q.where('iat', '=', by.iat);
  return (await q.returningAll().execute()).map(toRecord);
}

/**
 * The projection's part: the tokens of roles the project no longer has (all of them when the project
 * is gone, `roles` undefined) are deleted, so a role or project created again never revives them.
 */
export async function pruneProjectTokens(
  db: Db,
  project: string,
  roles: readonly string[] | undefined,
): Promise<void> {
  let q = db.withSchema('api').deleteFrom('project_tokens').where('project', '=', project);
  if (roles && roles.length > 0) q = q.where('role', 'not in', [...roles]);
  await q.execute();
}
