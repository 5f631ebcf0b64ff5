// The sync operations of each Application (requested by the api or started by the sync service
// itself: automation, self-heal, retry): status.operationState and status.history come from here.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';

type Db = Kysely<ApiDatabase> | Transaction<ApiDatabase>;

export interface SyncOperationRecord {
  id: string;
  appNamespace: string;
  appName: string;
  project: string;
  phase: string;
  message: string;
  revision: string;
  dryRun: boolean;
  prune: boolean;
  initiatedBy: string;
  requestedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  identity: string;
  impersonated: boolean;
  resources: unknown[];
  /** syncTrigger kind: user, bus, automated, self-heal, retry, rollback. */
  trigger: string;
  attempt: number;
  /** The Application's source the operation deployed (spec.source when it was recorded). */
  source: unknown;
  /** A multi-source Application's: the sources deployed (spec.sources) and the revision of each. */
  sources: unknown[] | null;
  revisions: string[];
  /** Its id in status.history: set once it succeeded (not a dry run, not a deletion, not selective). */
  historyId: number | null;
  /** A selective sync's resources (Argo CD's SyncOperation.resources); [] for a full sync. */
  syncResources: SyncResource[];
}

/** Argo CD's SyncOperationResource: namespace '' matches any namespace. */
export interface SyncResource {
  group: string;
  kind: string;
  name: string;
  namespace: string;
}

export const toOp = (r: Selectable<ApiDatabase['sync_operations']>): SyncOperationRecord => ({
  id: r.id,
  appNamespace: r.app_namespace,
  appName: r.app_name,
  project: r.project,
  phase: r.phase,
  message: r.message,
  revision: r.revision,
  dryRun: r.dry_run,
  prune: r.prune,
  initiatedBy: r.initiated_by,
  requestedAt: r.requested_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  identity: r.identity,
  impersonated: r.impersonated,
  resources: r.resources as unknown[],
  trigger: r.trigger,
  attempt: r.attempt,
  source: r.source ?? null,
  sources: Array.isArray(r.sources) ? (r.sources as unknown[]) : null,
  revisions: Array.isArray(r.revisions) ? (r.revisions as string[]) : [],
  historyId: r.history_id === null ? null : Number(r.history_id),
  syncResources: Array.isArray(r.sync_resources) ? (r.sync_resources as SyncResource[]) : [],
});

export async function insertSyncOperation(
  db: Db,
  op: Omit<
    SyncOperationRecord,
    | 'startedAt'
    | 'finishedAt'
    | 'identity'
    | 'impersonated'
    | 'resources'
    | 'trigger'
    | 'attempt'
    | 'source'
    | 'sources'
    | 'revisions'
    | 'historyId'
    | 'syncResources'
  > &
    Partial<
      Pick<
        SyncOperationRecord,
        'trigger' | 'attempt' | 'source' | 'sources' | 'revisions' | 'startedAt' | 'syncResources'
      >
    >,
): Promise<void> {
  await db
    .withSchema('api')
    .insertInto('sync_operations')
    .values({
      id: op.id,
      app_namespace: op.appNamespace,
      app_name: op.appName,
      project: op.project,
      phase: op.phase,
      message: op.message,
      revision: op.revision,
      dry_run: op.dryRun,
      prune: op.prune,
      initiated_by: op.initiatedBy,
      requested_at: op.requestedAt,
      ...(op.trigger ? { trigger: op.trigger } : {}),
      ...(op.attempt ? { attempt: op.attempt } : {}),
      ...(op.source !== undefined ? { source: JSON.stringify(op.source) } : {}),
      ...(op.sources ? { sources: JSON.stringify(op.sources) } : {}),
      ...(op.revisions && op.revisions.length > 0 ? { revisions: JSON.stringify(op.revisions) } : {}),
      ...(op.startedAt ? { started_at: op.startedAt } : {}),
      ...(op.syncResources?.length ? { sync_resources: JSON.stringify(op.syncResources) } : {}),
    })
    .execute();
  await db
    .withSchema('api')
    .updateTable('applications')
    .set({ operation_id: op.id })
    .where('namespace', '=', op.appNamespace)
    .where('name', '=', op.appName)
    .execute();
}

export async function findSyncOperation(db: Db, id: string): Promise<SyncOperationRecord | undefined> {
  const row = await db
    .withSchema('api')
    .selectFrom('sync_operations')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toOp(row) : undefined;
}

export async function syncHistory(
  db: Db,
  namespace: string,
  name: string,
  limit = 50,
): Promise<SyncOperationRecord[]> {
  const rows = await db
    .withSchema('api')
    .selectFrom('sync_operations')
    .selectAll()
    .where('app_namespace', '=', namespace)
    .where('app_name', '=', name)
    .orderBy('requested_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toOp);
}
