// A sync request: the operation record (status.operationState and history) and the
// io.capstan.cmd.sync.request.v1 command for the sync service, committed in one transaction through
// the outbox, or not at all.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { appendToStream, applicationSubject, newEvent, syncRequest } from '@capstan/events';
import type { ApiDatabase } from '../support/db.table.js';
import { actorOf } from '../auth/principal.js';
import type { RequestContext } from '../support/request.js';
import { API_SCHEMA } from '../migrations/index.js';
import { type StoredApplication } from './application.repository.js';
import { hasMultipleSources } from '@capstan/policy';
import { pinnedSourceRevisions } from './source-revisions.js';
import { findSyncOperation, insertSyncOperation, type SyncResource } from './sync-operation.repository.js';

export interface SyncRequestOptions {
  revision: string;
  dryRun: boolean;
  prune: boolean;
  /** Chosen by an idempotent caller: a redelivered request then starts nothing new. */
  operationId?: string;
  /** What asked (default a user; the ext sync path says bus, a rollback rollback), with the caller as actor. */
  trigger?: 'user' | 'bus' | 'rollback';
  /** What the operation deploys (a rollback's history entry; absent: spec.source), for status.history. */
  source?: unknown;
  /**
   * A multi-source Application's revisions: with sourcePositions, Argo CD's per-source sync
   * (`--revisions R --source-positions N`, see source-revisions.ts); without, one per source (a
   * rollback's history entry).
   */
  revisions?: readonly string[];
  /** Argo CD's sourcePositions (from 1) of revisions; present on a user's sync request. */
  sourcePositions?: readonly number[];
  /** A multi-source Application's sources deployed (a rollback's entry; absent: spec.sources). */
  sources?: unknown[];
  /** Argo CD's selective sync: only these resources (absent or empty: all). */
  resources?: SyncResource[];
}

/** Records the operation and its command (the caller has authorised the sync); returns the operation id. */
export async function recordSyncRequest(
  db: Kysely<ApiDatabase>,
  ctx: RequestContext,
  target: { namespace: string; name: string },
  app: StoredApplication,
  opts: SyncRequestOptions,
): Promise<string> {
  const operationId = opts.operationId ?? randomUUID();
  if (opts.operationId && (await findSyncOperation(db, operationId))) return operationId;
  const { name, namespace } = target;
  const actor = actorOf(ctx.principal);
  const trigger = opts.trigger ?? 'user';
  const multiSource = hasMultipleSources(app.application);
  const revisions =
    opts.revisions && !opts.sourcePositions
      ? opts.revisions
      : pinnedSourceRevisions(app.application, {
          revision: opts.revision,
          revisions: opts.revisions ?? [],
          sourcePositions: opts.sourcePositions ?? [],
          dryRun: opts.dryRun,
        });
  await db.transaction().execute(async (trx) => {
    await insertSyncOperation(trx, {
      id: operationId,
      appNamespace: namespace,
      appName: name,
      project: app.project,
      phase: 'Pending',
      message: 'waiting for the sync service',
      revision: opts.revision,
      dryRun: opts.dryRun,
      prune: opts.prune,
      initiatedBy: actor,
      requestedAt: new Date(),
      trigger,
      ...(multiSource
        ? { source: null, sources: opts.sources ?? app.application.spec.sources ?? [] }
        : { source: opts.source ?? app.application.spec.source ?? null }),
      ...(revisions ? { revisions: [...revisions] } : {}),
      ...(opts.resources?.length ? { syncResources: opts.resources } : {}),
    });
    const command = newEvent(
      syncRequest.type,
      {
        operationId,
        application: { name, namespace },
        project: app.project,
        ...(opts.revision ? { revision: opts.revision } : {}),
        ...(revisions && revisions.length > 0 ? { revisions: [...revisions] } : {}),
        dryRun: opts.dryRun,
        prune: opts.prune,
        ...(opts.resources?.length ? { resources: opts.resources } : {}),
        trigger: { kind: trigger, actor },
      },
      {
        subject: applicationSubject(namespace, name),
        actor,
        source: 'capstan/api',
        ...(ctx.correlationId ? { correlationId: ctx.correlationId } : {}),
      },
    );
    await appendToStream(trx as unknown as Parameters<typeof appendToStream>[0], {
      schema: API_SCHEMA,
      streamId: `sync-requests/${operationId}`,
      expectedVersion: 0,
      events: [command],
    });
  });
  return operationId;
}
