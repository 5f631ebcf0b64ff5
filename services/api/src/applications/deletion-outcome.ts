// The end of a cascade deletion, as Argo CD's resources finalizer: the sync service reports each
// failed attempt (the Application shows a DeletionError condition with the reason and stays) and,
// once every object the Application owned is gone, success; only then does the api remove the
// Application (application.deleted, cascade true). Applied once per event, by the api's consumer of
// the sync service's events (sync/sync-status.consumer.ts).
import { applyOnce, syncDeletionFailed, syncDeletionSucceeded } from '@capstan/events';
import type { Kysely } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';
import { API_SCHEMA } from '../migrations/index.js';
import { setApplicationCondition } from './application.repository.js';
import type { ApplicationsService } from './applications.service.js';
import type { SyncStatusEvent } from '../sync/sync-status.consumer.js';

/** The key of applyOnce's record (the events come through the consumer api-sync-status). */
const APPLIED_AS = 'api-application-deletions';
export const DELETION_ERROR = 'DeletionError';

/** The sync service's word on a cascade deletion; other events are not this function's. */
export async function applyDeletionEvent(
  db: Kysely<ApiDatabase>,
  applications: ApplicationsService,
  event: SyncStatusEvent,
): Promise<void> {
  if (event.type === syncDeletionFailed.type) {
    const { data } = event;
    await applyOnce(db, { schema: API_SCHEMA, consumer: APPLIED_AS, eventId: event.id }, (trx) =>
      setApplicationCondition(trx, data.application, DELETION_ERROR, {
        type: DELETION_ERROR,
        message: data.reason,
        lastTransitionTime: event.time,
      }),
    );
    return;
  }
  if (event.type === syncDeletionSucceeded.type) {
    const { data } = event;
    // The aggregate removes the Application once (a repeated event finds it gone and appends nothing).
    await applications.finalizeDeletion(
      { actor: event.actor, ...(event.correlationid ? { correlationId: event.correlationid } : {}) },
      data.application,
    );
  }
}
