// The Application aggregate: pure decide/evolve. The manifest is validated before a command is built
// (application.validation.ts); decide holds existence and optimistic concurrency.
import { AlreadyExistsError, NotFoundError } from '@capstan/service';
import { DEFAULT_CONTROL_NAMESPACE, type Application } from '@capstan/policy';
import { changedFields, sameManifest } from '../support/canonical.js';
import { VersionMismatchError } from '../support/errors.js';
import { applicationCreated, applicationUpdated, applicationDeleted } from '@capstan/events';

export const APPLICATION_CREATED = applicationCreated.type;
export const APPLICATION_UPDATED = applicationUpdated.type;
export const APPLICATION_DELETED = applicationDeleted.type;

export type ApplicationEvent =
  | { type: typeof APPLICATION_CREATED; data: { application: Application; uid: string } }
  | { type: typeof APPLICATION_UPDATED; data: { application: Application; changed: string[] } }
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
  | { type: 'delete'; name: string; namespace: string; cascade: boolean };

const label = (a: Application) => `${a.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE}/${a.metadata.name}`;

export function decideApplication(
  command: ApplicationCommand,
  state: ApplicationState,
  version: number,
): ApplicationEvent[] {
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
    case 'delete': {
      if (state.application === undefined)
        throw new NotFoundError(`application ${command.namespace}/${command.name} not found`);
      return [
        {
          type: APPLICATION_DELETED,
          data: {
            name: command.name,
            namespace: command.namespace,
            project: state.application.spec.project,
            cascade: command.cascade,
          },
        },
      ];
    }
  }
}

export function evolveApplication(state: ApplicationState, event: ApplicationEvent): ApplicationState {
  switch (event.type) {
    case APPLICATION_CREATED:
      return { application: event.data.application, uid: event.data.uid };
    case APPLICATION_UPDATED:
      return { ...state, application: event.data.application };
    case APPLICATION_DELETED:
      return initialApplicationState();
    default:
      return state;
  }
}
