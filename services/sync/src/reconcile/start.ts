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
  clusterRegistered,
  clusterRemoved,
  clusterUpdated,
  projectCreated,
  projectDeleted,
  projectUpdated,
  repositoryRevisionChanged,
  type Bus,
  type DeadLetterStore,
  type Envelope,
} from '@capstan/events';
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import { Reconciler, type ReconcilerDeps, type ReconcilerOptions } from './reconciler.js';

export const REVISIONS_CONSUMER = 'sync-automated';

export interface RunningReconciler {
  reconciler: Reconciler;
  /** The read model applied an event (called after it committed). */
  readModelApplied(event: Envelope): void;
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

function readModelApplied(reconciler: Reconciler, event: Envelope): void {
  const data = event.data as {
    application?: { metadata: { namespace?: string; name: string } };
    namespace?: string;
    name?: string;
    project?: { metadata: { name: string } };
    cluster?: { server: string };
    server?: string;
  };
  const appRef = (a: { metadata: { namespace?: string; name: string } }) => ({
    namespace: a.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
    name: a.metadata.name,
  });
  switch (event.type) {
    case applicationCreated.type:
    case applicationUpdated.type:
    case applicationDeletionRequested.type:
      if (data.application) reconciler.refresh(appRef(data.application));
      break;
    case applicationDeleted.type:
      if (data.namespace && data.name) void reconciler.forget({ namespace: data.namespace, name: data.name });
      break;
    case projectCreated.type:
    case projectUpdated.type:
      if (data.project) reconciler.projectChanged(data.project.metadata.name);
      break;
    case projectDeleted.type:
      if (data.name) reconciler.projectChanged(data.name);
      break;
    case clusterRegistered.type:
    case clusterUpdated.type:
      if (data.cluster) reconciler.clusterChanged(data.cluster.server);
      break;
    case clusterRemoved.type:
      if (data.server) reconciler.clusterChanged(data.server);
      break;
    default:
      break;
  }
}
