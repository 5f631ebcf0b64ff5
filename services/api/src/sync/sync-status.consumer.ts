// The api learns how sync operations went from the sync service's lifecycle events and keeps each
// operation (phase, identity, per-resource results, trigger) in its projection: its own requests,
// and the operations the sync service starts itself (automation, self-heal, retry), whose row is made
// from their sync.started. A successful deployment gets its status.history id. What is live (sync
// status, health) is not inferred from an operation's outcome: the reconciler says it
// (reconciled-status.consumer.ts). Applied once per event (redelivery changes nothing); a late event
// never reopens a finished operation.
import {
  applyOnce,
  assertNever,
  syncDeletionFailed,
  syncDeletionSucceeded,
  syncFailed,
  syncImpersonationIgnored,
  syncResourceSynced,
  syncStarted,
  syncSucceeded,
  type Bus,
  type EventOf,
  type RunningConsumer,
} from '@capstan/events';
import type { Logger } from '@capstan/service';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';
import { API_SCHEMA } from '../migrations/index.js';
import type { ApplicationsService } from '../applications/applications.service.js';
import type { ApplicationChanges } from '../applications/application-changes.js';
import { applyDeletionEvent } from '../applications/deletion-outcome.js';
import {
  assignHistoryId,
  recordStartedOperation,
  type StartedOperation,
} from '../applications/revision-history.js';
import type { Notifier } from '../notifications/notifier.js';
import {
  applyReconciledStatus,
  isReconciledStatusEvent,
  reconciledStatusEvents,
} from './reconciled-status.consumer.js';

const DURABLE = 'api-sync-status';

const definitions = [
  syncStarted,
  syncResourceSynced,
  syncSucceeded,
  syncFailed,
  syncImpersonationIgnored,
  syncDeletionFailed,
  syncDeletionSucceeded,
] as const;

/** The sync lifecycle events the api follows, their data as the bus decoded it against the catalog. */
export type SyncStatusEvent = EventOf<(typeof definitions)[number]>;

type Patch = {
  phase?: string;
  message?: string;
  revision?: string;
  /** A multi-source Application's revision per source. */
  revisions?: string[];
  identity?: string;
  impersonated?: boolean;
  startedAt?: Date;
  finishedAt?: Date;
  resource?: Record<string, unknown>;
  /** A cascade deletion's operation: never a deployment of status.history. */
  deletion?: boolean;
  /** sync.started: makes the row of an operation the api did not request; sets trigger and attempt. */
  started?: StartedOperation;
};

/** What an event changes in its operation. */
export function patchOf(event: SyncStatusEvent): { operationId: string; patch: Patch } {
  const at = new Date(event.time);
  switch (event.type) {
    case syncStarted.type: {
      const d = event.data;
      return {
        operationId: d.operationId,
        patch: {
          phase: 'Running',
          startedAt: at,
          message: d.dryRun ? 'dry run started' : 'sync started',
          ...(d.revision ? { revision: d.revision } : {}),
          ...(d.revisions ? { revisions: d.revisions } : {}),
          started: {
            operationId: d.operationId,
            application: d.application,
            dryRun: d.dryRun,
            attempt: d.attempt,
            trigger: d.trigger,
            revision: d.revision,
            revisions: d.revisions,
            actor: event.actor,
            at,
          },
        },
      };
    }
    case syncResourceSynced.type: {
      const d = event.data;
      return {
        operationId: d.operationId,
        patch: {
          resource: {
            group: d.group,
            kind: d.kind,
            namespace: d.namespace ?? '',
            name: d.name,
            verb: d.verb,
            status: d.status,
            message: d.message,
            identity: d.identity.username ?? 'control-plane',
            httpStatus: d.httpStatus ?? 0,
            attempt: d.attempt ?? 0,
          },
        },
      };
    }
    case syncSucceeded.type: {
      const d = event.data;
      return {
        operationId: d.operationId,
        patch: {
          phase: 'Succeeded',
          finishedAt: at,
          message: `${d.dryRun ? 'dry run: ' : ''}${d.resources} resources synced, ${d.pruned} pruned`,
          ...(d.revision ? { revision: d.revision } : {}),
          ...(d.revisions ? { revisions: d.revisions } : {}),
          identity: d.identity.username ?? '',
          impersonated: d.identity.impersonation,
        },
      };
    }
    case syncFailed.type: {
      const d = event.data;
      return {
        operationId: d.operationId,
        patch: {
          phase: d.phase === 'decision' ? 'Denied' : 'Failed',
          finishedAt: at,
          message: d.reason,
          ...(d.identity
            ? { identity: d.identity.username ?? '', impersonated: d.identity.impersonation }
            : {}),
        },
      };
    }
    case syncDeletionFailed.type: {
      const d = event.data;
      return {
        operationId: d.operationId,
        patch: {
          phase: 'Running',
          startedAt: at,
          message: `DeletionError: ${d.reason} (attempt ${d.attempt}, retrying in ${Math.round(d.retryInMs / 1000)} s)`,
          ...(d.identity
            ? { identity: d.identity.username ?? '', impersonated: d.identity.impersonation }
            : {}),
          deletion: true,
        },
      };
    }
    case syncDeletionSucceeded.type: {
      const d = event.data;
      return {
        operationId: d.operationId,
        patch: {
          phase: 'Succeeded',
          startedAt: at,
          finishedAt: at,
          message: `${d.deleted} resources deleted${d.skipped > 0 ? `, ${d.skipped} left (not this application's)` : ''}`,
          identity: d.identity.username ?? '',
          impersonated: d.identity.impersonation,
          deletion: true,
        },
      };
    }
    case syncImpersonationIgnored.type: {
      const d = event.data;
      return {
        operationId: d.operationId,
        patch: {
          message: `impersonation is off: destinationServiceAccounts of ${d.projects.map((p) => p.name).join(', ')} ignored`,
        },
      };
    }
    default:
      return assertNever(event);
  }
}

async function findOperationRow(trx: Transaction<ApiDatabase>, operationId: string) {
  return trx
    .withSchema('api')
    .selectFrom('sync_operations')
    .selectAll()
    .where('id', '=', operationId)
    .executeTakeFirst();
}

async function applyPatch(trx: Transaction<ApiDatabase>, operationId: string, p: Patch): Promise<void> {
  let op = await findOperationRow(trx, operationId);
  if (!op && p.started && (await recordStartedOperation(trx, p.started)))
    op = await findOperationRow(trx, operationId);
  if (!op) return;
  const finished = op.finished_at !== null;
  const terminal = p.finishedAt !== undefined;
  if (finished && (p.phase || terminal)) return;
  await trx
    .withSchema('api')
    .updateTable('sync_operations')
    .set({
      ...(p.phase ? { phase: p.phase } : {}),
      ...(p.message !== undefined ? { message: p.message } : {}),
      ...(p.revision ? { revision: p.revision } : {}),
      ...(p.revisions && p.revisions.length > 0 ? { revisions: JSON.stringify(p.revisions) } : {}),
      ...(p.identity !== undefined ? { identity: p.identity } : {}),
      ...(p.impersonated !== undefined ? { impersonated: p.impersonated } : {}),
      ...(p.startedAt && !op.started_at ? { started_at: p.startedAt } : {}),
      ...(p.finishedAt ? { finished_at: p.finishedAt } : {}),
      ...(p.resource ? { resources: sql`resources || ${JSON.stringify([p.resource])}::jsonb` } : {}),
      ...(p.started?.trigger ? { trigger: p.started.trigger.kind } : {}),
      ...(p.started && p.started.attempt > op.attempt ? { attempt: p.started.attempt } : {}),
    })
    .where('id', '=', operationId)
    .execute();
  // Argo CD records full syncs only: a selective one is no deployment to roll back to.
  const selective = Array.isArray(op.sync_resources) && op.sync_resources.length > 0;
  if (terminal && p.phase === 'Succeeded' && !op.dry_run && !p.deletion && !selective)
    await assignHistoryId(trx, op);
}

export async function applySyncEvent(db: Kysely<ApiDatabase>, event: SyncStatusEvent): Promise<void> {
  const change = patchOf(event);
  await applyOnce(db, { schema: API_SCHEMA, consumer: DURABLE, eventId: event.id }, (trx) =>
    applyPatch(trx, change.operationId, change.patch),
  );
}

export async function startSyncStatusConsumer(opts: {
  bus: Bus;
  db: Kysely<ApiDatabase>;
  /** A cascade deletion's outcome: DeletionError, or the Application removed (deletion-outcome.ts). */
  applications: ApplicationsService;
  logger: Logger;
  /** Told of each Application an applied event changed (the UI's live stream). */
  changes?: ApplicationChanges;
  /** Argo CD Notifications: evaluates the subscriptions of the event's Application once applied. */
  notifier?: Notifier;
}): Promise<{ stop(): Promise<void> }> {
  const consumer: RunningConsumer = await opts.bus.consume({
    durable: DURABLE,
    // The reconciler's verdicts come through this durable too (reconciled-status.consumer.ts).
    events: [...definitions, ...reconciledStatusEvents],
    handle: async (event) => {
      if (isReconciledStatusEvent(event)) {
        await applyReconciledStatus(opts.db, event);
        await opts.notifier?.onEvent(event);
      } else {
        await applySyncEvent(opts.db, event);
        // Before a finished cascade deletion removes the Application: on-deleted sees it (with its
        // deletionTimestamp) as Argo's controller sees it before the finalizer goes.
        await opts.notifier?.onEvent(event);
        await applyDeletionEvent(opts.db, opts.applications, event);
      }
      if (event.subject) opts.changes?.notify(event.subject);
    },
    onError: (err, info) => opts.logger.warn({ err, ...info }, 'sync status event not applied'),
  });
  return { stop: () => consumer.stop() };
}
