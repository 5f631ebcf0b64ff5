// What each Application applied in its last successful sync: the set prune compares against.
import type { SyncDbOrTrx } from '../sync.table.js';
import type { ObjectRef } from './plan.js';

type Db = SyncDbOrTrx;

/** What the Application applied to this cluster (by server URL) in its last successful sync. */
export async function loadApplied(
  db: Db,
  app: { namespace: string; name: string },
  server: string,
): Promise<ObjectRef[]> {
  const rows = await db
    .withSchema('sync')
    .selectFrom('applied_resources')
    .select(['api_version', 'kind', 'namespace', 'name'])
    .where('app_namespace', '=', app.namespace)
    .where('app_name', '=', app.name)
    .where('server', '=', server)
    .execute();
  return rows.map((r) => ({
    apiVersion: r.api_version,
    kind: r.kind,
    name: r.name,
    ...(r.namespace ? { namespace: r.namespace } : {}),
  }));
}

/** Replaces the record for this cluster; what was applied to another cluster is kept. */
export async function replaceApplied(
  db: Db,
  app: { namespace: string; name: string },
  server: string,
  refs: ObjectRef[],
): Promise<void> {
  await db
    .withSchema('sync')
    .deleteFrom('applied_resources')
    .where('app_namespace', '=', app.namespace)
    .where('app_name', '=', app.name)
    .where('server', '=', server)
    .execute();
  if (refs.length === 0) return;
  await db
    .withSchema('sync')
    .insertInto('applied_resources')
    .values(
      refs.map((r) => ({
        app_namespace: app.namespace,
        app_name: app.name,
        server,
        api_version: r.apiVersion,
        kind: r.kind,
        namespace: r.namespace ?? '',
        name: r.name,
      })),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
}
