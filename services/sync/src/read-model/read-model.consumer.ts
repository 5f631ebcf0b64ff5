// Builds the read model from the api's project, Application and cluster events. Each event's
// effect and its (consumer, event id) record commit together, so redelivery changes nothing; the
// read model can be rebuilt by replaying the stream into an empty schema.
import {
  applicationCreated,
  applicationDeleted,
  applicationDeletionRequested,
  applicationUpdated,
  applyOnce,
  assertNever,
  clusterRegistered,
  clusterRemoved,
  clusterUpdated,
  projectCreated,
  projectDeleted,
  projectUpdated,
  type Bus,
  type DeadLetterStore,
  type EventOf,
  type RunningConsumer,
} from '@capstan/events';
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import type { SyncDb } from '../sync.table.js';
import { enqueueOperation } from '../operations/operations.repository.js';
import type { DeletionRequestData } from '../operations/deletion-runner.js';
import { forgetApplied } from '../apply/applied-resources.repository.js';
import {
  deleteApplication,
  deleteCluster,
  deleteProject,
  upsertApplication,
  upsertCluster,
  upsertProject,
} from './read-model.repository.js';

export const READ_MODEL_CONSUMER = 'sync-read-model';

const definitions = [
  projectCreated,
  projectUpdated,
  projectDeleted,
  applicationCreated,
  applicationUpdated,
  applicationDeletionRequested,
  applicationDeleted,
  clusterRegistered,
  clusterUpdated,
  clusterRemoved,
] as const;

/** The events this consumer receives, their data as the bus decoded it against the catalog. */
export type ReadModelEvent = EventOf<(typeof definitions)[number]>;

export async function applyReadModelEvent(db: SyncDb, event: ReadModelEvent): Promise<void> {
  await applyOnce(db, { schema: 'sync', consumer: READ_MODEL_CONSUMER, eventId: event.id }, async (trx) => {
    switch (event.type) {
      case projectCreated.type:
      case projectUpdated.type: {
        const p = event.data.project;
        await upsertProject(trx, p.metadata.name, p);
        break;
      }
      case projectDeleted.type:
        await deleteProject(trx, event.data.name);
        break;
      case applicationCreated.type:
      case applicationUpdated.type: {
        const a = event.data.application;
        await upsertApplication(trx, a.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE, a.metadata.name, a);
        break;
      }
      case applicationDeletionRequested.type: {
        // The Application stays (marked) while its resources are deleted: an operation of the
        // durable queue, queued in the same transaction (deletion-runner.ts runs it).
        const { application: a, operationId, propagationPolicy } = event.data;
        const app = { namespace: a.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE, name: a.metadata.name };
        await upsertApplication(trx, app.namespace, app.name, a);
        const request: DeletionRequestData = {
          operationId,
          application: app,
          deletion: { propagationPolicy },
        };
        await enqueueOperation(trx, {
          operationId,
          appNamespace: app.namespace,
          appName: app.name,
          request,
          triggerEventId: event.id,
          actor: event.actor,
          correlationId: event.correlationid ?? null,
        });
        break;
      }
      case applicationDeleted.type:
        // Removed: after its cascade finished, or without cascade (its resources stay, with their
        // tracking ids). The record of what it applied goes: it claims nothing any more.
        await deleteApplication(trx, event.data.namespace, event.data.name);
        await forgetApplied(trx, event.data);
        break;
      case clusterRegistered.type:
      case clusterUpdated.type: {
        const c = event.data.cluster;
        await upsertCluster(trx, {
          name: c.name,
          server: c.server,
          ...(c.project ? { project: c.project } : {}),
        });
        break;
      }
      case clusterRemoved.type:
        await deleteCluster(trx, event.data.server);
        break;
      default:
        assertNever(event);
    }
  });
}

export function startReadModelConsumer(
  db: SyncDb,
  bus: Bus,
  options: {
    deadLetters?: DeadLetterStore;
    /** Told of each event after its effect committed (the reconciler refreshes what it concerns). */
    onApplied?: (event: ReadModelEvent) => void;
  } = {},
): Promise<RunningConsumer> {
  return bus.consume({
    durable: READ_MODEL_CONSUMER,
    events: definitions,
    handle: async (event) => {
      await applyReadModelEvent(db, event);
      options.onApplied?.(event);
    },
    ...(options.deadLetters ? { deadLetters: options.deadLetters } : {}),
  });
}
