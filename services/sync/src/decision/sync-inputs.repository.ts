// Everything a sync attempt reads before it decides, in one round trip: the Application, every
// project (a chain may reach any of them; there are few), the registered clusters, and what the
// Application applied in its last successful sync (to any cluster; prune compares against the one
// it syncs to). One sync at a time per Application, so nothing else changes the last of these
// while the sync runs.
import { sql } from 'kysely';
import type { ClusterRef } from '@capstan/policy';
import type { SyncDbOrTrx } from '../sync.table.js';
import type { ObjectRef } from '../apply/plan.js';

export interface SyncInputs {
  /** The Application's manifest as published, undefined when the read model does not have it. */
  application: unknown;
  projects: { name: string; manifest: unknown }[];
  clusters: ClusterRef[];
  /** Per cluster server URL. */
  applied: Map<string, ObjectRef[]>;
}

interface Row {
  application: unknown;
  projects: { name: string; manifest: unknown }[];
  clusters: { server: string; name: string; project: string | null }[];
  applied: { server: string; api_version: string; kind: string; namespace: string; name: string }[];
}

export async function loadSyncInputs(
  db: SyncDbOrTrx,
  app: { namespace: string; name: string },
): Promise<SyncInputs> {
  const { rows } = await sql<Row>`
    select
      (select manifest from sync.applications where namespace = ${app.namespace} and name = ${app.name})
        as application,
      coalesce((select json_agg(json_build_object('name', name, 'manifest', manifest))
        from sync.projects), '[]') as projects,
      coalesce((select json_agg(json_build_object('server', server, 'name', name, 'project', project))
        from sync.clusters), '[]') as clusters,
      coalesce((select json_agg(json_build_object('server', server, 'api_version', api_version,
          'kind', kind, 'namespace', namespace, 'name', name))
        from sync.applied_resources where app_namespace = ${app.namespace} and app_name = ${app.name}),
        '[]') as applied`.execute(db);
  const row = rows[0]!;
  const applied = new Map<string, ObjectRef[]>();
  for (const r of row.applied) {
    const refs = applied.get(r.server) ?? [];
    refs.push({
      apiVersion: r.api_version,
      kind: r.kind,
      name: r.name,
      ...(r.namespace ? { namespace: r.namespace } : {}),
    });
    applied.set(r.server, refs);
  }
  return {
    application: row.application ?? undefined,
    projects: row.projects,
    clusters: row.clusters.map((c) => ({
      server: c.server,
      name: c.name,
      ...(c.project ? { project: c.project } : {}),
    })),
    applied,
  };
}
