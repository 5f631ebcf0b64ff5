// The ApplicationSet aggregate: pure decide/evolve over the set's event stream. decide holds
// existence, Argo CD's create-vs-upsert rule and "no change, no event"; the manifest is validated
// before a command is built (manifest.ts), the generated Applications are the api's.
import { sameJson } from '@capstan/policy';
import { AlreadyExistsError, NotFoundError } from '@capstan/service';
import {
  applicationSetCreated,
  applicationSetDeleted,
  applicationSetStatusChanged,
  applicationSetUpdated,
} from '@capstan/events';
import { changedFields, sameAppSet, setKey, type StoredAppSet } from './manifest.js';
import { emptyStatus, type AppSetStatus } from './status.js';

export const APPSET_CREATED = applicationSetCreated.type;
export const APPSET_UPDATED = applicationSetUpdated.type;
export const APPSET_DELETED = applicationSetDeleted.type;
export const APPSET_STATUS_CHANGED = applicationSetStatusChanged.type;

export type AppSetEvent =
  | { type: typeof APPSET_CREATED; data: { applicationSet: StoredAppSet; uid: string } }
  | { type: typeof APPSET_UPDATED; data: { applicationSet: StoredAppSet; changed: string[] } }
  | { type: typeof APPSET_DELETED; data: { name: string; namespace: string; preserveResources: boolean } }
  | { type: typeof APPSET_STATUS_CHANGED; data: AppSetStatus };

export interface AppSetState {
  set: StoredAppSet | undefined;
  uid: string | undefined;
  status: AppSetStatus;
}

export const initialAppSetState = (): AppSetState => ({
  set: undefined,
  uid: undefined,
  status: emptyStatus(),
});

export type AppSetCommand =
  | { type: 'upsert'; applicationSet: StoredAppSet; upsert: boolean; uid: string }
  | { type: 'delete'; name: string; namespace: string; preserveResources: boolean }
  | { type: 'record-status'; status: AppSetStatus };

/** Argo CD's message (server/applicationset Create) when a create meets a different existing set. */
export const SPEC_DIFFERS = 'existing ApplicationSet spec is different, use upsert flag to force update';

export function decideAppSet(command: AppSetCommand, state: AppSetState): AppSetEvent[] {
  switch (command.type) {
    case 'upsert': {
      const next = command.applicationSet;
      if (state.set === undefined)
        return [{ type: APPSET_CREATED, data: { applicationSet: next, uid: command.uid } }];
      if (sameAppSet(state.set, next)) return [];
      if (!command.upsert) throw new AlreadyExistsError(SPEC_DIFFERS);
      return [
        { type: APPSET_UPDATED, data: { applicationSet: next, changed: changedFields(state.set, next) } },
      ];
    }
    case 'delete': {
      if (state.set === undefined) throw new NotFoundError(`applicationset ${setKey(command)} not found`);
      return [
        {
          type: APPSET_DELETED,
          data: {
            name: command.name,
            namespace: command.namespace,
            preserveResources: command.preserveResources,
          },
        },
      ];
    }
    case 'record-status': {
      // A set deleted meanwhile keeps no status; an unchanged status writes nothing.
      if (state.set === undefined) return [];
      if (sameJson(state.status, command.status)) return [];
      return [{ type: APPSET_STATUS_CHANGED, data: command.status }];
    }
  }
}

export function evolveAppSet(state: AppSetState, event: AppSetEvent): AppSetState {
  switch (event.type) {
    case APPSET_CREATED:
      return { set: event.data.applicationSet, uid: event.data.uid, status: emptyStatus() };
    case APPSET_UPDATED:
      return { ...state, set: event.data.applicationSet };
    case APPSET_DELETED:
      return initialAppSetState();
    case APPSET_STATUS_CHANGED:
      return { ...state, status: event.data };
    default:
      return state;
  }
}
