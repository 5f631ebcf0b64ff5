// Queries of appset.application_sets: the projection written with each append (same transaction),
// reads for Get/List, and the reconciler's scheduling (due sets, triggers).
import { sql, type Kysely, type Transaction } from 'kysely';
import { APPSET_SCHEMA } from '../migrations/index.js';
import type { AppSetDatabase } from './appset.table.js';
import type { StoredAppSet } from './manifest.js';
import type { AppSetStatus } from './status.js';
import type { ReconciledInputs } from '../reconcile/inputs.js';

export type AppSetDb = Kysely<AppSetDatabase> | Transaction<AppSetDatabase>;

export interface AppSetRow {
  set: StoredAppSet;
  uid: string;
  status: AppSetStatus;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

const table = (db: AppSetDb) => db.withSchema(APPSET_SCHEMA);

export async function upsertProjection(
  db: AppSetDb,
  row: AppSetRow & { requeueSeconds: number; gitRepos: readonly string[]; readsClusters: boolean },
): Promise<void> {
  const values = {
    namespace: row.set.metadata.namespace,
    name: row.set.metadata.name,
    uid: row.uid,
    manifest: JSON.stringify(row.set),
    labels: JSON.stringify(row.set.metadata.labels ?? {}),
    status: JSON.stringify(row.status),
    version: row.version,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    git_repos: [...row.gitRepos],
    reads_clusters: row.readsClusters,
    requeue_seconds: row.requeueSeconds,
    next_reconcile_at: new Date(row.updatedAt.getTime() + row.requeueSeconds * 1000),
  };
  await table(db)
    .insertInto('application_sets')
    .values(values)
    .onConflict((oc) =>
      oc.columns(['namespace', 'name']).doUpdateSet({
        manifest: values.manifest,
        labels: values.labels,
        status: values.status,
        version: values.version,
        updated_at: values.updated_at,
        git_repos: values.git_repos,
        reads_clusters: values.reads_clusters,
        requeue_seconds: values.requeue_seconds,
      }),
    )
    .execute();
}

/** Status only (a reconcile): keeps the manifest and scheduling columns. */
export async function updateStatusProjection(
  db: AppSetDb,
  key: { namespace: string; name: string },
  status: AppSetStatus,
  version: number,
  at: Date,
): Promise<void> {
  await table(db)
    .updateTable('application_sets')
    .set({ status: JSON.stringify(status), version, updated_at: at })
    .where('namespace', '=', key.namespace)
    .where('name', '=', key.name)
    .execute();
}

export async function deleteProjection(
  db: AppSetDb,
  key: { namespace: string; name: string },
): Promise<void> {
  await table(db)
    .deleteFrom('application_sets')
    .where('namespace', '=', key.namespace)
    .where('name', '=', key.name)
    .execute();
}

function toRow(r: {
  manifest: StoredAppSet;
  uid: string;
  status: AppSetStatus;
  version: number;
  created_at: Date;
  updated_at: Date;
}): AppSetRow {
  return {
    set: r.manifest,
    uid: r.uid,
    status: r.status,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const columns = ['manifest', 'uid', 'status', 'version', 'created_at', 'updated_at'] as const;

export async function findAppSet(
  db: AppSetDb,
  key: { namespace: string; name: string },
): Promise<AppSetRow | undefined> {
  const r = await table(db)
    .selectFrom('application_sets')
    .select(columns)
    .where('namespace', '=', key.namespace)
    .where('name', '=', key.name)
    .executeTakeFirst();
  return r ? toRow(r) : undefined;
}

/** Sets of one namespace (or all), by namespace and name; label filtering is the caller's. */
export async function listAppSets(db: AppSetDb, namespace: string | undefined): Promise<AppSetRow[]> {
  let q = table(db).selectFrom('application_sets').select(columns);
  if (namespace) q = q.where('namespace', '=', namespace);
  const rows = await q.orderBy('namespace').orderBy('name').execute();
  return rows.map(toRow);
}

/** What a reconcile learnt about a set's inputs (repositories read, even through templated URLs). */
export async function recordInputs(
  db: AppSetDb,
  key: { namespace: string; name: string },
  inputs: { gitRepos: readonly string[]; readsClusters: boolean },
): Promise<void> {
  await table(db)
    .updateTable('application_sets')
    .set({ git_repos: [...inputs.gitRepos], reads_clusters: inputs.readsClusters })
    .where('namespace', '=', key.namespace)
    .where('name', '=', key.name)
    // Unchanged inputs write nothing (a no-op reconcile stays a no-op).
    .where(
      sql<boolean>`(git_repos, reads_clusters) is distinct from (${sql.val([...inputs.gitRepos])}::text[], ${inputs.readsClusters})`,
    )
    .execute();
}

/** The inputs of the set's last successful reconcile (none: regenerate). */
export async function findReconciledInputs(
  db: AppSetDb,
  key: { namespace: string; name: string },
): Promise<ReconciledInputs | undefined> {
  const r = await table(db)
    .selectFrom('application_sets')
    .select('reconciled_inputs')
    .where('namespace', '=', key.namespace)
    .where('name', '=', key.name)
    .executeTakeFirst();
  return r?.reconciled_inputs ?? undefined;
}

/** Records the inputs of a successful reconcile, or forgets them (null) after a failed one. */
export async function recordReconciledInputs(
  db: AppSetDb,
  key: { namespace: string; name: string },
  inputs: ReconciledInputs | null,
): Promise<void> {
  const value = inputs ? JSON.stringify(inputs) : null;
  await table(db)
    .updateTable('application_sets')
    .set({ reconciled_inputs: value })
    .where('namespace', '=', key.namespace)
    .where('name', '=', key.name)
    // The same inputs again write nothing (a no-op reconcile stays a no-op).
    .where(sql<boolean>`reconciled_inputs is distinct from ${value}::jsonb`)
    .execute();
}

/**
 * Claims up to `limit` due sets: each gets its next due time now (so another replica does not take
 * it too) and is returned for reconciling.
 */
export async function claimDueSets(
  db: Kysely<AppSetDatabase>,
  limit: number,
): Promise<{ namespace: string; name: string }[]> {
  const r = await sql<{ namespace: string; name: string }>`
    update appset.application_sets s
       set next_reconcile_at = now() + make_interval(secs => s.requeue_seconds)
      from (select namespace, name from appset.application_sets
             where next_reconcile_at <= now()
             order by next_reconcile_at
             limit ${limit}
             for update skip locked) due
     where s.namespace = due.namespace and s.name = due.name
    returning s.namespace, s.name`.execute(db);
  return r.rows;
}

/** Makes sets due now: those reading one of `repos` (normalised URLs), or the cluster registry. */
export async function markDue(
  db: AppSetDb,
  by: { repos: readonly string[] } | { clusters: true } | { key: { namespace: string; name: string } },
): Promise<number> {
  let q = table(db)
    .updateTable('application_sets')
    .set({ next_reconcile_at: sql`now()` });
  if ('repos' in by) q = q.where(sql<boolean>`git_repos && ${sql.val([...by.repos])}::text[]`);
  else if ('clusters' in by) q = q.where('reads_clusters', '=', true);
  else q = q.where('namespace', '=', by.key.namespace).where('name', '=', by.key.name);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows);
}
