// Builds the read model from the api's project, Application and cluster events. Each event's
// effect and its (consumer, event id) record commit together, so redelivery changes nothing; the
// read model can be rebuilt by replaying the stream into an empty schema.
import {
  applicationCreated,
  applicationDeleted,
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
import {
  findApplication,
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
  applicationDeleted,
  clusterRegistered,
  clusterUpdated,
  clusterRemoved,
] as const;

/** The events this consumer receives, their data as the bus decoded it against the catalog. */
type ReadModelEvent = EventOf<(typeof definitions)[number]>;

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
      case applicationDeleted.type: {
        const { namespace, name, cascade } = event.data;
        const manifest = await findApplication(trx, namespace, name);
        if (cascade && manifest !== undefined) {
          // Cascade: an operation that applies nothing and prunes everything the Application applied,
          // under the identity its project resolves, queued in the same transaction as the deletion.
          const operationId = `delete:${event.id}`;
          await enqueueOperation(trx, {
            operationId,
            appNamespace: namespace,
            appName: name,
            request: {
              operationId,
              application: { namespace, name },
              dryRun: false,
              prune: true,
              cascadeDelete: { application: manifest },
            },
            triggerEventId: event.id,
            actor: event.actor,
            correlationId: event.correlationid ?? null,
          });
        }
        await deleteApplication(trx, namespace, name);
        break;
      }
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
  options: { deadLetters?: DeadLetterStore } = {},
): Promise<RunningConsumer> {
  return bus.consume({
    durable: READ_MODEL_CONSUMER,
    events: definitions,
    handle: (event) => applyReadModelEvent(db, event),
    ...(options.deadLetters ? { deadLetters: options.deadLetters } : {}),
  });
}
