// The Application aggregate: pure decide/evolve. The manifest is validated before a command is built
// (application.validation.ts); decide holds existence and optimistic concurrency.
import { AlreadyExistsError, FailedPreconditionError, NotFoundError } from '@capstan/service';
import { DEFAULT_CONTROL_NAMESPACE, type Application } from '@capstan/policy';
import { changedFields, sameManifest } from '../support/canonical.js';
import { VersionMismatchError } from '../support/errors.js';
import {
  applicationCreated,
  applicationUpdated,
  applicationDeleted,
  applicationDeletionRequested,
} from '@capstan/events';
import {
  deletionTimestampOf,
  finalizersAfterDelete,
  markedForDeletion,
  resourcesFinalizerOf,
  type DeleteOptions,
  type PropagationPolicy,
} from './application-deletion.js';

export const APPLICATION_CREATED = applicationCreated.type;
export const APPLICATION_UPDATED = applicationUpdated.type;
export const APPLICATION_DELETION_REQUESTED = applicationDeletionRequested.type;
export const APPLICATION_DELETED = applicationDeleted.type;

export type ApplicationEvent =
  | { type: typeof APPLICATION_CREATED; data: { application: Application; uid: string } }
  | { type: typeof APPLICATION_UPDATED; data: { application: Application; changed: string[] } }
  | {
      type: typeof APPLICATION_DELETION_REQUESTED;
      data: { application: Application; operationId: string; propagationPolicy: PropagationPolicy };
    }
  | {
      type: typeof APPLICATION_DELETED;
      data: { name: string; namespace: string; project: string; cascade: boolean };
    };

export interface ApplicationState {
  application: Application | undefined;
  uid: string | undefined;
}

export const initialApplicationState = (): ApplicationState => ({ application: undefined, uid: undefined });

export type ApplicationCommand =
  | { type: 'create'; application: Application; upsert: boolean; uid: string }
  | { type: 'update'; application: Application; expectedVersion: number }
  | {
      type: 'delete';
      name: string;
      namespace: string;
      options: DeleteOptions;
      /** The cascade's operation id, and when the deletion was asked for (deletionTimestamp). */
      operationId: string;
      at: Date;
    }
  /** The sync service deleted every owned resource: the Application goes (once). */
  | { type: 'finalize'; name: string; namespace: string };

const label = (a: Application) => `${a.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE}/${a.metadata.name}`;

export function decideApplication(
  command: ApplicationCommand,
  state: ApplicationState,
  version: number,
): ApplicationEvent[] {
  if ((command.type === 'create' || command.type === 'update') && deletionTimestampOf(state.application))
    throw new FailedPreconditionError(
      `application ${label(command.application)} is being deleted (since ${deletionTimestampOf(state.application)})`,
    );
  switch (command.type) {
    case 'create': {
      if (state.application === undefined) {
        return [{ type: APPLICATION_CREATED, data: { application: command.application, uid: command.uid } }];
      }
      if (sameManifest(state.application, command.application)) return [];
      if (!command.upsert) {
        throw new AlreadyExistsError(
          `application ${label(command.application)} already exists and differs (use upsert to update it)`,
        );
      }
      return [
        {
          type: APPLICATION_UPDATED,
          data: {
            application: command.application,
            changed: changedFields(state.application, command.application),
          },
        },
      ];
    }
    case 'update': {
      if (state.application === undefined)
        throw new NotFoundError(`application ${label(command.application)} not found`);
      if (command.expectedVersion !== 0 && command.expectedVersion !== version) {
        throw new VersionMismatchError(
          'application',
          label(command.application),
          version,
          command.expectedVersion,
        );
      }
      if (sameManifest(state.application, command.application)) return [];
      return [
        {
          type: APPLICATION_UPDATED,
          data: {
            application: command.application,
            changed: changedFields(state.application, command.application),
          },
        },
      ];
    }
    case 'delete':
      return decideDelete(command, state.application);
    case 'finalize': {
      if (!deletionTimestampOf(state.application)) return [];
      return [deleted(command, state.application!, true)];
    }
  }
}

function deleted(
  ref: { name: string; namespace: string },
  app: Application,
  cascade: boolean,
): ApplicationEvent {
  return {
    type: APPLICATION_DELETED,
    data: { name: ref.name, namespace: ref.namespace, project: app.spec.project, cascade },
  };
}

/**
 * With a resources finalizer (after the request's cascade), the Application is marked and stays
 * until its resources are gone; without one it goes at once. A repeated delete of an Application
 * being deleted changes nothing, unless it asks to orphan (cascade=false removes the finalizer).
 */
function decideDelete(
  command: Extract<ApplicationCommand, { type: 'delete' }>,
  app: Application | undefined,
): ApplicationEvent[] {
  if (app === undefined)
    throw new NotFoundError(`application ${command.namespace}/${command.name} not found`);
  const finalizers = finalizersAfterDelete(app, command.options);
  const policy = resourcesFinalizerOf({
    ...app,
    metadata: { ...app.metadata, finalizers } as Application['metadata'],
  });
  if (policy === undefined) return [deleted(command, app, false)];
  if (deletionTimestampOf(app)) return [];
  return [
    {
      type: APPLICATION_DELETION_REQUESTED,
      data: {
        application: markedForDeletion(app, finalizers, command.at),
        operationId: command.operationId,
        propagationPolicy: policy,
      },
    },
  ];
}

export function evolveApplication(state: ApplicationState, event: ApplicationEvent): ApplicationState {
  switch (event.type) {
    case APPLICATION_CREATED:
      return { application: event.data.application, uid: event.data.uid };
    case APPLICATION_UPDATED:
    case APPLICATION_DELETION_REQUESTED:
      return { ...state, application: event.data.application };
    case APPLICATION_DELETED:
      return initialApplicationState();
    default:
      return state;
  }
}
