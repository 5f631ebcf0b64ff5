// The sync operations of an Application as Argo CD's status.history shows them: every successful
// deployment (not a dry run, not a deletion), whoever started it, with an id that counts 0, 1, 2, ...
// per Application (Argo's persistRevisionHistory) and the last spec.revisionHistoryLimit (10 by
// default) shown. Operations the sync service starts itself (automation, self-heal, retry) get their
// row here from their sync.started event, so they are in the history like the api's own requests.
import { sql, type Kysely, type Transaction } from 'kysely';
import { hasMultipleSources } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import { findApplication } from './application.repository.js';
import { insertSyncOperation, toOp, type SyncOperationRecord } from './sync-operation.repository.js';

type Db = Kysely<ApiDatabase> | Transaction<ApiDatabase>;

/** Argo CD's default of spec.revisionHistoryLimit. */
export const REVISION_HISTORY_LIMIT = 10;

/** syncTrigger kinds whose actor is the sync service's automation rather than a principal. */
const AUTOMATED_TRIGGERS = new Set(['automated', 'self-heal', 'retry']);

/** Argo CD's OperationInitiator of an operation: a user's name, or automated. */
export function initiatorOf(op: Pick<SyncOperationRecord, 'trigger' | 'initiatedBy'>): {
  username: string;
  automated: boolean;
} {
  if (AUTOMATED_TRIGGERS.has(op.trigger)) return { username: '', automated: true };
  return { username: op.initiatedBy.replace(/^user:/, ''), automated: false };
}

/** What a sync.started event tells of its operation. */
export interface StartedOperation {
  operationId: string;
  application: { namespace: string; name: string };
  dryRun: boolean;
  attempt: number;
  trigger?: { kind: string; actor: string } | undefined;
  revision?: string | undefined;
  revisions?: readonly string[] | undefined;
  /** The event's actor, for an operation the api did not request and whose trigger is not given. */
  actor: string;
  at: Date;
}

/**
 * Records a started operation the api has no row for (the sync service started it: automation,
 * self-heal, a retry): the row is made from the event, with the Application's project and source of
 * now. An Application the api does not know (deleted meanwhile) gets none. Returns whether a row was made.
 */
export async function recordStartedOperation(
  trx: Transaction<ApiDatabase>,
  s: StartedOperation,
): Promise<boolean> {
  const app = await findApplication(trx, s.application.namespace, s.application.name);
  if (!app) return false;
  await insertSyncOperation(trx, {
    id: s.operationId,
    appNamespace: s.application.namespace,
    appName: s.application.name,
    project: app.project,
    phase: 'Pending',
    message: '',
    revision: s.revision ?? '',
    dryRun: s.dryRun,
    prune: false,
    initiatedBy: s.trigger?.actor ?? s.actor,
    requestedAt: s.at,
    startedAt: s.at,
    trigger: s.trigger?.kind ?? 'user',
    attempt: s.attempt,
    ...(hasMultipleSources(app.application)
      ? { source: null, sources: app.application.spec.sources ?? [] }
      : { source: app.application.spec.source ?? null }),
    ...(s.revisions ? { revisions: [...s.revisions] } : {}),
  });
  return true;
}

/** A successful deployment gets the next history id of its Application (0 for the first, as Argo). */
export async function assignHistoryId(
  trx: Transaction<ApiDatabase>,
  op: { id: string; app_namespace: string; app_name: string },
): Promise<void> {
  await sql`update api.sync_operations set history_id = (
      select coalesce(max(history_id), -1) + 1 from api.sync_operations
      where app_namespace = ${op.app_namespace} and app_name = ${op.app_name})
    where id = ${op.id} and history_id is null`.execute(trx);
}

/** status.history: the last `limit` successful deployments, oldest first (Argo's order). */
export async function revisionHistory(
  db: Db,
  namespace: string,
  name: string,
  limit: number = REVISION_HISTORY_LIMIT,
): Promise<SyncOperationRecord[]> {
  if (limit <= 0) return [];
  const rows = await db
    .withSchema('api')
    .selectFrom('sync_operations')
    .selectAll()
    .where('app_namespace', '=', namespace)
    .where('app_name', '=', name)
    .where('history_id', 'is not', null)
    .orderBy('history_id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toOp).reverse();
}
