// What each Application applied in its last successful sync: the set prune compares against (read
// with the rest of a sync's inputs, decision/sync-inputs.repository.ts).
import type { SyncDbOrTrx } from '../sync.table.js';
import type { ObjectRef } from './plan.js';

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
