// The applications projection: the manifest plus the status the api learns from the sync service's
// reconciler. The sync operations of each Application are in sync-operation.repository.ts.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { DEFAULT_CONTROL_NAMESPACE, type Application } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';

type Db = Kysely<ApiDatabase> | Transaction<ApiDatabase>;

/** Rows per statement of the batch writes (well under PostgreSQL's 65,535 parameters). */
const ROWS_PER_STATEMENT = 1000;

export interface StoredApplication {
  application: Application;
  project: string;
  version: number;
  uid: string;
  createdAt: Date;
  updatedAt: Date;
  syncStatus: string;
  healthStatus: string;
  operationId: string | null;
  revision: string | null;
  /** A multi-source Application's commit per source (status.sync.revisions); [] otherwise. */
  revisions: string[];
  reconciledAt: Date | null;
  /** The reconciler's health message (status.health.message). */
  healthMessage: string;
  /** The reconciler's per-resource statuses (status.resources), as the status-changed event carried them. */
  resources: ReconciledResource[];
  /** Argo CD's status.conditions (DeletionError while a cascade deletion fails). */
  conditions: ApplicationCondition[];
}

/** One entry of status.resources (Argo CD's ResourceStatus), as the reconciler reported it. */
export interface ReconciledResource {
  group: string;
  version: string;
  kind: string;
  namespace: string;
  name: string;
  status: string;
  health?: { status: string; message?: string | undefined } | undefined;
  requiresPruning?: boolean | undefined;
  message?: string | undefined;
}

export interface ApplicationCondition {
  type: string;
  message: string;
  lastTransitionTime: string;
}

const toStored = (r: Selectable<ApiDatabase['applications']>): StoredApplication => ({
  application: r.manifest as Application,
  project: r.project,
  version: r.version,
  uid: r.uid,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  syncStatus: r.sync_status,
  healthStatus: r.health_status,
  operationId: r.operation_id,
  revision: r.revision,
  revisions: Array.isArray(r.revisions) ? (r.revisions as string[]) : [],
  reconciledAt: r.reconciled_at,
  healthMessage: r.health_message,
  resources: Array.isArray(r.resources) ? (r.resources as ReconciledResource[]) : [],
  conditions: Array.isArray(r.conditions) ? (r.conditions as ApplicationCondition[]) : [],
});

export async function upsertApplicationRow(
  db: Db,
  app: Application,
  version: number,
  uid: string,
  at: Date,
): Promise<void> {
  // The status columns are the reconciler's alone (it compares again after a spec change): a write
  // of the manifest, and a rebuild, leave them as they are.
  const manifest = JSON.stringify(app);
  await db
    .withSchema('api')
    .insertInto('applications')
    .values({
      namespace: app.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
      name: app.metadata.name,
      project: app.spec.project,
      manifest,
      version,
      uid,
      created_at: at,
      updated_at: at,
    })
    .onConflict((oc) =>
      oc
        .columns(['namespace', 'name'])
        .doUpdateSet({ manifest, project: app.spec.project, version, updated_at: at }),
    )
    .execute();
}

/** upsertApplicationRow (a write, not a rebuild) of many applications in one statement per thousand. */
export async function upsertApplicationRows(
  db: Db,
  rows: readonly { app: Application; version: number; uid: string; at: Date }[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT)
    await db
      .withSchema('api')
      .insertInto('applications')
      .values(
        rows.slice(i, i + ROWS_PER_STATEMENT).map(({ app, version, uid, at }) => ({
          namespace: app.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
          name: app.metadata.name,
          project: app.spec.project,
          manifest: JSON.stringify(app),
          version,
          uid,
          created_at: at,
          updated_at: at,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['namespace', 'name']).doUpdateSet((eb) => ({
          manifest: eb.ref('excluded.manifest'),
          project: eb.ref('excluded.project'),
          version: eb.ref('excluded.version'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
}

/** deleteApplicationRow of many applications in one statement per thousand. */
export async function deleteApplicationRows(
  db: Db,
  keys: readonly { namespace: string; name: string }[],
): Promise<void> {
  for (let i = 0; i < keys.length; i += ROWS_PER_STATEMENT)
    await db
      .withSchema('api')
      .deleteFrom('applications')
      .where(({ eb, refTuple, tuple }) =>
        eb(
          refTuple('namespace', 'name'),
          'in',
          keys.slice(i, i + ROWS_PER_STATEMENT).map((k) => tuple(k.namespace, k.name)),
        ),
      )
      .execute();
}

export async function deleteApplicationRow(db: Db, namespace: string, name: string): Promise<void> {
  await db
    .withSchema('api')
    .deleteFrom('applications')
    .where('namespace', '=', namespace)
    .where('name', '=', name)
    .execute();
}

/** Replaces the Application's conditions of `type` with `condition` (none: removes them); a list for types Argo CD repeats per resource. */
export async function setApplicationCondition(
  db: Db,
  key: { namespace: string; name: string },
  type: string,
  condition: ApplicationCondition | readonly ApplicationCondition[] | undefined,
): Promise<void> {
  const conditions = condition === undefined ? [] : Array.isArray(condition) ? condition : [condition];
  await db
    .withSchema('api')
    .updateTable('applications')
    .set({
      conditions: sql`coalesce((select jsonb_agg(c) from jsonb_array_elements(conditions) c where c->>'type' <> ${type}), '[]'::jsonb) || ${JSON.stringify(conditions)}::jsonb`,
    })
    .where('namespace', '=', key.namespace)
    .where('name', '=', key.name)
    .execute();
}

export async function findApplication(
  db: Db,
  namespace: string,
  name: string,
): Promise<StoredApplication | undefined> {
  const row = await db
    .withSchema('api')
    .selectFrom('applications')
    .selectAll()
    .where('namespace', '=', namespace)
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? toStored(row) : undefined;
}

export interface ApplicationPageQuery {
  projects: readonly string[];
  labels: Readonly<Record<string, string>>;
  after: { namespace: string; name: string } | undefined;
  limit: number;
}

/**
 * What changes whenever anything a reader sees of an application changes: its version (every
 * manifest change), identity and creation time (a recreated application, a projection rebuild) and
 * status columns (written by the sync-status consumer on whichever replica applied the event).
 */
const STAMP = sql<string>`concat_ws('|', version, uid, created_at, sync_status, health_status, coalesce(operation_id, ''), coalesce(revision, ''), revisions::text, coalesce(reconciled_at::text, ''), md5(conditions::text), health_message, md5(resources::text))`;

/** An application's key and project with its stamp. */
export interface ApplicationStamp {
  namespace: string;
  name: string;
  project: string;
  stamp: string;
}

/**
 * One page of stamps in (namespace, name) order, as one JSON text `[[namespace, name, project,
 * stamp], ...]`, with the SHA-256 of that text. A list reads its page on every call; when the caller
 * already holds the text with hash `knownHash`, only the hash comes back (`page` is null): a page's
 * data received on every call (a hundred rows, or even one 12 kB text) was enough to promote
 * megabytes per second into the old generation and make garbage collection the api's longest pause.
 */
export async function pageApplicationStamps(
  db: Db,
  q: ApplicationPageQuery,
  knownHash: string,
): Promise<{ hash: string; page: string | null }> {
  let rows = db
    .withSchema('api')
    .selectFrom('applications')
    .select(['namespace', 'name', 'project', STAMP.as('stamp')]);
  if (q.projects.length > 0) rows = rows.where('project', 'in', [...q.projects]);
  for (const [k, v] of Object.entries(q.labels)) {
    rows = rows.where(sql<boolean>`manifest->'metadata'->'labels'->>${k} = ${v}`);
  }
  if (q.after) {
    const { namespace, name } = q.after;
    rows = rows.where(sql<boolean>`(namespace, name) > (${namespace}, ${name})`);
  }
  const text = db
    .selectFrom(rows.orderBy('namespace').orderBy('name').limit(q.limit).as('p'))
    .select(
      sql<string>`coalesce(json_agg(json_build_array(p.namespace, p.name, p.project, p.stamp) order by p.namespace, p.name)::text, '[]')`.as(
        'page',
      ),
    );
  const row = await db
    .selectFrom(
      db
        .selectFrom(text.as('t'))
        .select(['t.page', sql<string>`encode(sha256(convert_to(t.page, 'UTF8')), 'hex')`.as('hash')])
        .as('h'),
    )
    .select([
      'h.hash',
      sql<string | null>`case when h.hash = ${knownHash} then null else h.page end`.as('page'),
    ])
    .executeTakeFirstOrThrow();
  return { hash: row.hash, page: row.page };
}

/**
 * The distinct projects of the stored applications, by a loose scan of applications_project (one
 * index probe per project, however many applications each holds).
 */
export async function applicationProjects(db: Db): Promise<string[]> {
  const r = await sql<{ project: string }>`
    with recursive p(project) as (
      (select project from api.applications order by project limit 1)
      union all
      select (select a.project from api.applications a where a.project > p.project order by a.project limit 1)
      from p where p.project is not null)
    select project from p where project is not null`.execute(db);
  return r.rows.map((row) => row.project);
}

/** Full rows for the given keys, with their stamps. */
export async function findApplications(
  db: Db,
  keys: readonly { namespace: string; name: string }[],
): Promise<(StoredApplication & { stamp: string })[]> {
  if (keys.length === 0) return [];
  const rows = await db
    .withSchema('api')
    .selectFrom('applications')
    .selectAll()
    .select(STAMP.as('stamp'))
    .where(
      sql<boolean>`(namespace, name) in (${sql.join(keys.map((k) => sql`(${k.namespace}, ${k.name})`))})`,
    )
    .execute();
  return rows.map((r) => ({ ...toStored(r), stamp: r.stamp }));
}
