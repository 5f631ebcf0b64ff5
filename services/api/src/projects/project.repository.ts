// The projects projection: one row per live AppProject, written in the same transaction as its events.
import { sql, type Kysely, type Transaction } from 'kysely';
import { DEFAULT_CONTROL_NAMESPACE, type AppProject } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import { pruneProjectTokens } from './project-tokens.repository.js';

type Db = Kysely<ApiDatabase> | Transaction<ApiDatabase>;

export interface StoredProject {
  project: AppProject;
  version: number;
  uid: string;
  createdAt: Date;
  updatedAt: Date;
}

const toStored = (r: ApiDatabase['projects']): StoredProject => ({
  project: r.manifest as AppProject,
  version: r.version,
  uid: r.uid,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export async function upsertProjectRow(
  db: Db,
  project: AppProject,
  version: number,
  uid: string,
  at: Date,
): Promise<void> {
  await db
    .withSchema('api')
    .insertInto('projects')
    .values({
      name: project.metadata.name,
      namespace: project.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
      manifest: JSON.stringify(project),
      version,
      uid,
      created_at: at,
      updated_at: at,
    })
    .onConflict((oc) =>
      oc.column('name').doUpdateSet({ manifest: JSON.stringify(project), version, updated_at: at }),
    )
    .execute();
  await pruneProjectTokens(
    db,
    project.metadata.name,
    (project.spec.roles ?? []).map((r) => r.name),
  );
}

export async function deleteProjectRow(db: Db, name: string): Promise<void> {
  await db.withSchema('api').deleteFrom('projects').where('name', '=', name).execute();
  await pruneProjectTokens(db, name, undefined);
}

export async function findProject(db: Db, name: string): Promise<StoredProject | undefined> {
  const row = await db
    .withSchema('api')
    .selectFrom('projects')
    .selectAll()
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? toStored(row) : undefined;
}

export async function listProjects(db: Db): Promise<StoredProject[]> {
  const rows = await db.withSchema('api').selectFrom('projects').selectAll().orderBy('name').execute();
  return rows.map(toStored);
}

/** Names of projects whose parentProject is `name` (a parent cannot be deleted under its children). */
export async function childProjects(db: Db, name: string): Promise<string[]> {
  const rows = await sql<{ name: string }>`
    select name from api.projects where manifest->'spec'->>'parentProject' = ${name} order by name`.execute(
    db,
  );
  return rows.rows.map((r) => r.name);
}
