// What is live, as the sync service's reconciler observes it (io.capstan.sync.status-changed.v1):
// the Application's sync status and the revision it compared with, its health, each resource's
// status, and when. The api keeps the latest verdict in its projection and never infers one (a
// finished sync sets only its operation). A verdict older than the one stored (reconciledAt) is
// ignored, so redelivery, reordering and a replay of the whole stream all end at the newest; each
// event is applied once (applyOnce). A verdict of Unknown with a reason is shown as Argo CD's
// ComparisonError condition.
//
// The events come through the durable consumer of the other sync events (api-sync-status, which
// already reads evt.sync.>), so the bus permissions need no new consumer; applyOnce keys them under
// their own name, so this projection can be replayed on its own.
import { applyOnce, assertNever, syncStatusChanged, type EventOf } from '@capstan/events';
import type { Kysely, Transaction } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';
import { API_SCHEMA } from '../migrations/index.js';
import { setApplicationCondition } from '../applications/application.repository.js';

/** The key of applyOnce's record. */
const APPLIED_AS = 'api-reconciled-status';

/** Argo CD's condition for a comparison that failed (status Unknown). */
export const COMPARISON_ERROR = 'ComparisonError';
/** Argo CD's condition for each declared object argocd-cm's resource.exclusions/inclusions leave out. */
export const EXCLUDED_RESOURCE_WARNING = 'ExcludedResourceWarning';

/** The reconciler's events this projection follows. */
export const reconciledStatusEvents = [syncStatusChanged] as const;

export type ReconciledStatusEvent = EventOf<(typeof reconciledStatusEvents)[number]>;

export function isReconciledStatusEvent(event: { type: string }): event is ReconciledStatusEvent {
  return reconciledStatusEvents.some((d) => d.type === event.type);
}

async function applyVerdict(
  trx: Transaction<ApiDatabase>,
  d: EventOf<typeof syncStatusChanged>['data'],
): Promise<void> {
  const at = new Date(d.reconciledAt);
  if (Number.isNaN(at.getTime())) return;
  const key = { namespace: d.application.namespace, name: d.application.name };
  // One statement decides and writes, so two replicas applying verdicts of one Application at once
  // still end at the newer (the row lock orders them; the second re-checks the condition).
  const updated = await trx
    .withSchema('api')
    .updateTable('applications')
    .set({
      sync_status: d.sync.status,
      revision: d.sync.revision ?? null,
      revisions: JSON.stringify(d.sync.revisions ?? []),
      health_status: d.health.status,
      health_message: d.health.message ?? '',
      resources: JSON.stringify(d.resources),
      reconciled_at: at,
    })
    .where('namespace', '=', key.namespace)
    .where('name', '=', key.name)
    .where((eb) => eb.or([eb('reconciled_at', 'is', null), eb('reconciled_at', '<=', at)]))
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return;
  await setApplicationCondition(
    trx,
    key,
    COMPARISON_ERROR,
    d.sync.status === 'Unknown' && d.message
      ? { type: COMPARISON_ERROR, message: d.message, lastTransitionTime: d.reconciledAt }
      : undefined,
  );
  await setApplicationCondition(
    trx,
    key,
    EXCLUDED_RESOURCE_WARNING,
    (d.excluded ?? []).map((message) => ({
      type: EXCLUDED_RESOURCE_WARNING,
      message,
      lastTransitionTime: d.reconciledAt,
    })),
  );
}

export async function applyReconciledStatus(
  db: Kysely<ApiDatabase>,
  event: ReconciledStatusEvent,
): Promise<void> {
  await applyOnce(db, { schema: API_SCHEMA, consumer: APPLIED_AS, eventId: event.id }, async (trx) => {
    switch (event.type) {
      case syncStatusChanged.type:
        return applyVerdict(trx, event.data);
      default:
        return assertNever(event.type);
    }
  });
}
