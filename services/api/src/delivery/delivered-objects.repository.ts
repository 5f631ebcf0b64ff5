// The control-plane objects an Application delivered, found by the tracking id the api stamped on
// them (its application part: `<app>:` up to the first colon).
import { sql, type Kysely } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';
import { TRACKING_ANNOTATION, trackingAppName, type AppRef } from './tracking.js';

export interface DeliveredRow {
  kind: 'AppProject' | 'Application';
  namespace: string;
  name: string;
  /** The RBAC object: a project's name, an Application's `<project>/<name>`. */
  object: string;
  annotations?: Record<string, string>;
}

export async function findDelivered(db: Kysely<ApiDatabase>, app: AppRef): Promise<DeliveredRow[]> {
  const prefix = `${trackingAppName(app)}:`;
  const rows = await sql<{
    kind: DeliveredRow['kind'];
    namespace: string;
    name: string;
    object: string;
    annotations: unknown;
  }>`
    select 'AppProject' as kind, namespace, name, name as object, manifest->'metadata'->'annotations' as annotations
      from api.projects
     where starts_with(manifest->'metadata'->'annotations'->>${TRACKING_ANNOTATION}, ${prefix})
    union all
    select 'Application' as kind, namespace, name, project || '/' || name as object,
           manifest->'metadata'->'annotations' as annotations
      from api.applications
     where starts_with(manifest->'metadata'->'annotations'->>${TRACKING_ANNOTATION}, ${prefix})
     order by kind, namespace, name`.execute(db);
  return rows.rows.map((r) => ({
    kind: r.kind,
    namespace: r.namespace,
    name: r.name,
    object: r.object,
    ...(r.annotations && typeof r.annotations === 'object'
      ? { annotations: r.annotations as Record<string, string> }
      : {}),
  }));
}

/** Applications (not among `leaving`) still in `project`: a project cannot be pruned under them. */
export async function applicationsIn(
  db: Kysely<ApiDatabase>,
  project: string,
): Promise<{ namespace: string; name: string }[]> {
  return db
    .withSchema('api')
    .selectFrom('applications')
    .select(['namespace', 'name'])
    .where('project', '=', project)
    .execute();
}
