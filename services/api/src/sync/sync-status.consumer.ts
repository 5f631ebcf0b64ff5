// The api learns how its sync requests went from the sync service's lifecycle events and keeps the
// operation (phase, identity, per-resource results) and the Application's status in its projection.
// Applied once per event (redelivery changes nothing); a late event never reopens a finished operation.
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
import { applyDeletionEvent } from '../applications/deletion-outcome.js';

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
type SyncStatusEvent = EventOf<(typeof definitions)[number]>;

type Patch = {
  phase?: string;
  message?: string;
  revision?: string;
  identity?: string;
  impersonated?: boolean;
  startedAt?: Date;
  finishedAt?: Date;
  resource?: Record<string, unknown>;
  /** A cascade deletion's operation: the Application's sync and health status are not its to change. */
  deletion?: boolean;
};

/** What an event changes in its operation. */
export function patchOf(event: SyncStatusEvent): { operationId: string; patch: Patch } {
  const at = new Date(event.time);
  switch (event.type) {
    case syncStarted.type: {
      const d = event.data;
      return {
        operationId: d.operationId,
        patch: { phase: 'Running', startedAt: at, message: d.dryRun ? 'dry run started' : 'sync started' },
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

async function applyPatch(trx: Transaction<ApiDatabase>, operationId: string, p: Patch): Promise<void> {
  const op = await trx
    .withSchema('api')
    .selectFrom('sync_operations')
    .selectAll()
    .where('id', '=', operationId)
    .executeTakeFirst();
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
      ...(p.identity !== undefined ? { identity: p.identity } : {}),
      ...(p.impersonated !== undefined ? { impersonated: p.impersonated } : {}),
      ...(p.startedAt && !op.started_at ? { started_at: p.startedAt } : {}),
      ...(p.finishedAt ? { finished_at: p.finishedAt } : {}),
      ...(p.resource ? { resources: sql`resources || ${JSON.stringify([p.resource])}::jsonb` } : {}),
    })
    .where('id', '=', operationId)
    .execute();
  if (terminal && !op.dry_run && !p.deletion) {
    await trx
      .withSchema('api')
      .updateTable('applications')
      .set({
        sync_status: p.phase === 'Succeeded' ? 'Synced' : 'OutOfSync',
        health_status: p.phase === 'Succeeded' ? 'Healthy' : 'Degraded',
        ...(p.revision ? { revision: p.revision } : {}),
        reconciled_at: p.finishedAt!,
      })
      .where('namespace', '=', op.app_namespace)
      .where('name', '=', op.app_name)
      .execute();
  }
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
}): Promise<{ stop(): Promise<void> }> {
  const consumer: RunningConsumer = await opts.bus.consume({
    durable: DURABLE,
    events: definitions,
    handle: async (event) => {
      await applySyncEvent(opts.db, event);
      await applyDeletionEvent(opts.db, opts.applications, event);
    },
    onError: (err, info) => opts.logger.warn({ err, ...info }, 'sync status event not applied'),
  });
  return { stop: () => consumer.stop() };
}
