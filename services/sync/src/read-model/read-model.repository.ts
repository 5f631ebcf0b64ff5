// The sync service's own copy of projects, Applications and clusters, as the api's events describe
// them. Manifests are stored as published and decoded by @capstan/policy at decision time, so an
// invalid one refuses the syncs that need it (with field paths) instead of stopping the consumer.
import type { ClusterRef } from '@capstan/policy';
import type { SyncDbOrTrx } from '../sync.table.js';

type Db = SyncDbOrTrx;

export async function upsertProject(db: Db, name: string, manifest: unknown): Promise<void> {
  await db
    .withSchema('sync')
    .insertInto('projects')
    .values({ name, manifest: JSON.stringify(manifest), updated_at: new Date() })
    .onConflict((oc) =>
      oc.column('name').doUpdateSet({ manifest: JSON.stringify(manifest), updated_at: new Date() }),
    )
    .execute();
}

export async function deleteProject(db: Db, name: string): Promise<void> {
  await db.withSchema('sync').deleteFrom('projects').where('name', '=', name).execute();
}

export async function upsertApplication(
  db: Db,
  namespace: string,
  name: string,
  manifest: unknown,
): Promise<void> {
  await db
    .withSchema('sync')
    .insertInto('applications')
    .values({ namespace, name, manifest: JSON.stringify(manifest), updated_at: new Date() })
    .onConflict((oc) =>
      oc
        .columns(['namespace', 'name'])
        .doUpdateSet({ manifest: JSON.stringify(manifest), updated_at: new Date() }),
    )
    .execute();
}

export async function deleteApplication(db: Db, namespace: string, name: string): Promise<void> {
  await db
    .withSchema('sync')
    .deleteFrom('applications')
    .where('namespace', '=', namespace)
    .where('name', '=', name)
    .execute();
}

export async function upsertCluster(db: Db, cluster: ClusterRef): Promise<void> {
  const values = {
    server: cluster.server,
    name: cluster.name,
    project: cluster.project ?? null,
    updated_at: new Date(),
  };
  await db
    .withSchema('sync')
    .insertInto('clusters')
    .values(values)
    .onConflict((oc) =>
      oc
        .column('server')
        .doUpdateSet({ name: values.name, project: values.project, updated_at: values.updated_at }),
    )
    .execute();
}

export async function deleteCluster(db: Db, server: string): Promise<void> {
  await db.withSchema('sync').deleteFrom('clusters').where('server', '=', server).execute();
}

export async function findApplication(db: Db, namespace: string, name: string): Promise<unknown | undefined> {
  const row = await db
    .withSchema('sync')
    .selectFrom('applications')
    .select('manifest')
    .where('namespace', '=', namespace)
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.manifest;
}

export async function allApplications(
  db: Db,
): Promise<{ namespace: string; name: string; manifest: unknown }[]> {
  return db.withSchema('sync').selectFrom('applications').select(['namespace', 'name', 'manifest']).execute();
}
