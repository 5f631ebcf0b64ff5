// The AppProject aggregate: pure decide/evolve. Validation of the manifest itself (schema, globs,
// ServiceAccount names) happens before a command is built (project.validation.ts); decide holds the
// rules that need the current state: existence, optimistic concurrency, and that only admins may
// change what widens a tenant's reach.
import { AlreadyExistsError, NotFoundError, PermissionDeniedError } from '@capstan/service';
import type { AppProject } from '@capstan/policy';
import { changedFields, sameManifest } from '../support/canonical.js';
import { VersionMismatchError } from '../support/errors.js';
import { projectCreated, projectUpdated, projectDeleted } from '@capstan/events';

export const PROJECT_CREATED = projectCreated.type;
export const PROJECT_UPDATED = projectUpdated.type;
export const PROJECT_DELETED = projectDeleted.type;

export type ProjectEvent =
  | { type: typeof PROJECT_CREATED; data: { project: AppProject; uid: string } }
  | { type: typeof PROJECT_UPDATED; data: { project: AppProject; changed: string[] } }
  | { type: typeof PROJECT_DELETED; data: { name: string; namespace: string } };

export interface ProjectState {
  project: AppProject | undefined;
  uid: string | undefined;
}

export const initialProjectState = (): ProjectState => ({ project: undefined, uid: undefined });

export type ProjectCommand =
  | { type: 'create'; project: AppProject; upsert: boolean; isAdmin: boolean; uid: string }
  | { type: 'update'; project: AppProject; expectedVersion: number; isAdmin: boolean }
  | { type: 'delete'; name: string; namespace: string; expectedVersion: number };

/** Fields only admins may set or change (DESIGN.md: self-service must not reopen escalation). */
export const PRIVILEGED_FIELDS = ['destinationServiceAccounts', 'parentProject'] as const;

export function privilegedChanges(before: AppProject | undefined, after: AppProject): string[] {
  return PRIVILEGED_FIELDS.filter((f) => {
    const a = before?.spec[f];
    const b = after.spec[f];
    const empty = (v: unknown) => v === undefined || (Array.isArray(v) && v.length === 0);
    if (empty(a) && empty(b)) return false;
    return !sameManifest(a, b);
  }).map((f) => `spec.${f}`);
}

function requireAdminFor(before: AppProject | undefined, after: AppProject, isAdmin: boolean): void {
  const privileged = privilegedChanges(before, after);
  if (privileged.length > 0 && !isAdmin) {
    throw new PermissionDeniedError(
      `only admins may change ${privileged.join(' and ')} of project ${after.metadata.name}`,
    );
  }
}

export function decideProject(command: ProjectCommand, state: ProjectState, version: number): ProjectEvent[] {
  switch (command.type) {
    case 'create': {
      const name = command.project.metadata.name;
      if (state.project === undefined) {
        requireAdminFor(undefined, command.project, command.isAdmin);
        return [{ type: PROJECT_CREATED, data: { project: command.project, uid: command.uid } }];
      }
      if (sameManifest(state.project, command.project)) return [];
      if (!command.upsert)
        throw new AlreadyExistsError(`project ${name} already exists and differs (use upsert to update it)`);
      requireAdminFor(state.project, command.project, command.isAdmin);
      return [
        {
          type: PROJECT_UPDATED,
          data: { project: command.project, changed: changedFields(state.project, command.project) },
        },
      ];
    }
    case 'update': {
      const name = command.project.metadata.name;
      if (state.project === undefined) throw new NotFoundError(`project ${name} not found`);
      if (command.expectedVersion !== 0 && command.expectedVersion !== version) {
        throw new VersionMismatchError('project', name, version, command.expectedVersion);
      }
      if (sameManifest(state.project, command.project)) return [];
      requireAdminFor(state.project, command.project, command.isAdmin);
      return [
        {
          type: PROJECT_UPDATED,
          data: { project: command.project, changed: changedFields(state.project, command.project) },
        },
      ];
    }
    case 'delete': {
      if (state.project === undefined) throw new NotFoundError(`project ${command.name} not found`);
      if (command.expectedVersion !== 0 && command.expectedVersion !== version) {
        throw new VersionMismatchError('project', command.name, version, command.expectedVersion);
      }
      return [{ type: PROJECT_DELETED, data: { name: command.name, namespace: command.namespace } }];
    }
  }
}

export function evolveProject(state: ProjectState, event: ProjectEvent): ProjectState {
  switch (event.type) {
    case PROJECT_CREATED:
      return { project: event.data.project, uid: event.data.uid };
    case PROJECT_UPDATED:
      return { ...state, project: event.data.project };
    case PROJECT_DELETED:
      return initialProjectState();
    default:
      return state;
  }
}
