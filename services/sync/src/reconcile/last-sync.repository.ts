// What automation needs to know about an Application's syncs (Argo CD reads it from the
// Application's operationState): whether one is queued or running, and how the last one ended, at
// which revision and for which spec. Read only when an automated Application is OutOfSync.
import { readStream } from '@capstan/events';
import type { SyncDbOrTrx } from '../sync.table.js';
import { operationStream } from '../operations/operations.repository.js';
import { revisionKey, type LastSync } from './automation.js';

interface AutomatedRequest {
  revision?: string;
  revisions?: string[];
  dryRun?: boolean;
  deletion?: unknown;
  cascadeDelete?: unknown;
  specHash?: string;
  selfHealAttempts?: number;
}

export async function lastSyncOf(
  db: SyncDbOrTrx,
  app: { namespace: string; name: string },
): Promise<{ inFlight: boolean; last: LastSync | undefined }> {
  const rows = await db
    .withSchema('sync')
    .selectFrom('operations')
    .select(['operation_id', 'status', 'request', 'finished_at'])
    .where('app_namespace', '=', app.namespace)
    .where('app_name', '=', app.name)
    .orderBy('created_at', 'desc')
    .limit(20)
    .execute();
  const syncs = rows.filter((r) => {
    const req = r.request as AutomatedRequest;
    return req.dryRun !== true && req.deletion === undefined && req.cascadeDelete === undefined;
  });
  if (syncs.some((r) => r.status === 'queued' || r.status === 'running'))
    return { inFlight: true, last: undefined };
  const row = syncs[0];
  if (!row) return { inFlight: false, last: undefined };
  const req = row.request as AutomatedRequest;
  let revision = revisionKey(req) ?? null;
  if (revision === null) {
    // A sync of the Application's targetRevision: its succeeded event says what that resolved to.
    const events = await readStream(db, 'sync', operationStream(row.operation_id));
    const done = events.map((e) => e.envelope).find((e) => e.type === 'io.capstan.sync.succeeded.v1');
    revision = revisionKey((done?.data ?? {}) as { revision?: string | null; revisions?: string[] }) || null;
  }
  return {
    inFlight: false,
    last: {
      revision,
      specHash: req.specHash ?? null,
      succeeded: row.status === 'succeeded',
      finishedAt: row.finished_at,
      selfHealAttempts: req.selfHealAttempts ?? 0,
      operationId: row.operation_id,
    },
  };
}
