// What the info gauges report, read from PostgreSQL at each scrape (two queries, bounded by the
// number of Applications and clusters): the read model, the published verdicts, the operations in
// progress. Every replica reads the same rows, so each reports the same series (dashboards take
// `max by` the labels; docs/observability.md).
import { sql } from 'kysely';
import { repoLabel } from '@capstan/service';
import type { SyncDb } from '../sync.table.js';

interface AppManifest {
  metadata?: { deletionTimestamp?: string };
  spec?: {
    project?: string;
    source?: { repoURL?: string };
    sources?: { repoURL?: string }[];
    destination?: { server?: string; name?: string; namespace?: string };
    syncPolicy?: { automated?: { enabled?: boolean } | null };
  };
}

export interface AppInfo {
  namespace: string;
  name: string;
  project: string;
  autosync_enabled: string;
  repo: string;
  dest_server: string;
  dest_namespace: string;
  sync_status: string;
  health_status: string;
  operation: string;
}

export async function appInfoRows(db: SyncDb): Promise<AppInfo[]> {
  const { rows } = await sql<{
    namespace: string;
    name: string;
    manifest: AppManifest;
    sync_status: string | null;
    health_status: string | null;
    operation: string | null;
  }>`
    select a.namespace, a.name, a.manifest, s.sync_status, s.health_status,
      (select case when bool_or(o.request ? 'deletion') then 'delete' else 'sync' end
         from sync.operations o
        where o.app_namespace = a.namespace and o.app_name = a.name
          and o.status in ('queued', 'running')) as operation
    from sync.applications a
    left join sync.reconcile_status s on s.app_namespace = a.namespace and s.app_name = a.name`.execute(db);
  const servers = new Map((await clusterInfoRows(db)).map((c) => [c.name, c.server]));
  return rows.map((r) => {
    const spec = r.manifest.spec ?? {};
    const dest = spec.destination ?? {};
    const automated = spec.syncPolicy?.automated;
    const repoUrl = spec.source?.repoURL ?? spec.sources?.[0]?.repoURL ?? '';
    return {
      namespace: r.namespace,
      name: r.name,
      project: spec.project || 'default',
      autosync_enabled: String(!!automated && automated.enabled !== false),
      repo: repoUrl ? repoLabel(repoUrl) : '',
      dest_server: dest.server ?? (dest.name ? (servers.get(dest.name) ?? '') : ''),
      dest_namespace: dest.namespace ?? '',
      sync_status: r.sync_status ?? 'Unknown',
      health_status: r.health_status ?? 'Unknown',
      // Argo CD: `delete` while the Application is being deleted, `sync` while an operation is on.
      operation: r.manifest.metadata?.deletionTimestamp ? 'delete' : (r.operation ?? ''),
    };
  });
}

export async function clusterInfoRows(db: SyncDb): Promise<{ server: string; name: string }[]> {
  return db.withSchema('sync').selectFrom('clusters').select(['server', 'name']).orderBy('server').execute();
}
