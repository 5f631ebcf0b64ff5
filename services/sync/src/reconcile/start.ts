// Starts the reconciler (reconcile.enabled) and its bus trigger: `repository.revision-changed`
// refreshes the Applications reading that repository at once (the durable consumer that used to
// queue automated syncs directly keeps its name, so an existing deployment's consumer carries on).
// The read model and the sync workers tell it, in process, about Application, project and cluster
// changes and about finished syncs.
import {
  applicationCreated,
  applicationDeleted,
  applicationDeletionRequested,
  applicationUpdated,
  assertNever,
  clusterRegistered,
  clusterRemoved,
  clusterUpdated,
  projectCreated,
  projectDeleted,
  projectUpdated,
  repositoryRevisionChanged,
  type Bus,
  type DeadLetterStore,
} from '@capstan/events';
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import type { ReadModelEvent } from '../read-model/read-model.consumer.js';
import { Reconciler, type ReconcilerDeps, type ReconcilerOptions } from './reconciler.js';

export const REVISIONS_CONSUMER = 'sync-automated';

export interface RunningReconciler {
  reconciler: Reconciler;
  /** The read model applied an event (called after it committed). */
  readModelApplied(event: ReadModelEvent): void;
  /** A sync operation of this Application finished in this process. */
  syncFinished(app: { namespace: string; name: string }): void;
  stop(): Promise<void>;
}

export async function startReconciler(
  deps: ReconcilerDeps & { bus: Bus; deadLetters?: DeadLetterStore },
  options: ReconcilerOptions,
): Promise<RunningReconciler> {
  const reconciler = new Reconciler(deps, options);
  await reconciler.start();
  const revisions = await deps.bus.consume({
    durable: REVISIONS_CONSUMER,
    events: [repositoryRevisionChanged],
    handle: async (event) => reconciler.revisionChanged(event.data),
    ...(deps.deadLetters ? { deadLetters: deps.deadLetters } : {}),
  });
  return {
    reconciler,
    readModelApplied: (event) => readModelApplied(reconciler, event),
    syncFinished: (app) => reconciler.syncFinished(app),
    async stop() {
      await revisions.stop();
      await reconciler.stop();
    },
  };
}

function readModelApplied(reconciler: Reconciler, event: ReadModelEvent): void {
  switch (event.type) {
    case applicationCreated.type:
    case applicationUpdated.type:
    case applicationDeletionRequested.type: {
      const { metadata } = event.data.application;
      reconciler.refresh({ namespace: metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE, name: metadata.name });
      break;
    }
    case applicationDeleted.type:
      void reconciler.forget({ namespace: event.data.namespace, name: event.data.name });
      break;
    case projectCreated.type:
    case projectUpdated.type:
      reconciler.projectChanged(event.data.project.metadata.name);
      break;
    case projectDeleted.type:
      reconciler.projectChanged(event.data.name);
      break;
    case clusterRegistered.type:
    case clusterUpdated.type:
      reconciler.clusterChanged(event.data.cluster.server);
      break;
    case clusterRemoved.type:
      reconciler.clusterChanged(event.data.server);
      break;
    default:
      assertNever(event);
  }
}
