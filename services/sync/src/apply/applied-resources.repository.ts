// What each Application applied in its last successful sync: the set prune compares against (read
// with the rest of a sync's inputs, decision/sync-inputs.repository.ts).
import type { SyncDbOrTrx } from '../sync.table.js';
import { refKey, type ObjectRef } from './plan.js';

type Db = SyncDbOrTrx;

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

/**
 * The other Applications whose last successful sync to `server` applied one of `refs`, by refKey
 * (one indexed query): how a sync learns that an object it applied before has been taken over
 * without reading it again from the cluster.
 */
export async function otherAppliers(
  db: Db,
  app: { namespace: string; name: string },
  server: string,
  refs: readonly ObjectRef[],
): Promise<Map<string, { namespace: string; name: string }>> {
  const found = new Map<string, { namespace: string; name: string }>();
  if (refs.length === 0) return found;
  const rows = await db
    .withSchema('sync')
    .selectFrom('applied_resources')
    .select(['app_namespace', 'app_name', 'api_version', 'kind', 'namespace', 'name'])
    .where('server', '=', server)
    .where((eb) =>
      eb.or(
        refs.map((r) =>
          eb.and([
            eb('kind', '=', r.kind),
            eb('namespace', '=', r.namespace ?? ''),
            eb('name', '=', r.name),
            eb('api_version', '=', r.apiVersion),
          ]),
        ),
      ),
    )
    .where((eb) => eb.not(eb.and([eb('app_namespace', '=', app.namespace), eb('app_name', '=', app.name)])))
    .execute();
  for (const r of rows) {
    const ref = {
      apiVersion: r.api_version,
      kind: r.kind,
      name: r.name,
      ...(r.namespace ? { namespace: r.namespace } : {}),
    };
    found.set(refKey(ref), { namespace: r.app_namespace, name: r.app_name });
  }
  return found;
}

/** Everything an Application applied, on every cluster (it was removed). */
export async function forgetApplied(db: Db, app: { namespace: string; name: string }): Promise<void> {
  await db
    .withSchema('sync')
    .deleteFrom('applied_resources')
    .where('app_namespace', '=', app.namespace)
    .where('app_name', '=', app.name)
    .execute();
}
