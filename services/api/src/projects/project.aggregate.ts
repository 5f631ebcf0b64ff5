// The AppProject aggregate: pure decide/evolve. Validation of the manifest itself (schema, globs,
// ServiceAccount names) happens before a command is built (project.validation.ts); decide holds the
// rules that need the current state: existence, optimistic concurrency, and that only admins may
// write a project no parentProject bounds.
import {
  AlreadyExistsError,
  FailedPreconditionError,
  NotFoundError,
  PermissionDeniedError,
} from '@capstan/service';
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
  | {
      type: 'create';
      project: AppProject;
      upsert: boolean;
      isAdmin: boolean;
      /** The parentProject the caller's rights were checked against (the stored one, when it exists). */
      checkedParent: string | undefined;
      uid: string;
    }
  | {
      type: 'update';
      project: AppProject;
      expectedVersion: number;
      isAdmin: boolean;
      checkedParent: string | undefined;
    }
  | { type: 'delete'; name: string; namespace: string; expectedVersion: number };

/**
 * Self-service (issue 12, proposal 001): a non-admin may write a project only when it is bounded
 * by a parentProject (the service checks the caller's rights on the parents and the bound check
 * before building the command). An unbounded project, and any change that leaves a project
 * unbounded, stays an admin action. Null: allowed.
 */
export function selfServiceRefusal(
  before: AppProject | undefined,
  after: AppProject,
  isAdmin: boolean,
): string | null {
  if (isAdmin || after.spec.parentProject !== undefined) return null;
  const name = after.metadata.name;
  if (before?.spec.parentProject !== undefined)
    return `only admins may remove spec.parentProject of project ${name}: it would no longer be bounded by ${before.spec.parentProject}`;
  return before === undefined
    ? `only admins may create project ${name} without spec.parentProject; a project you create must name a parent project that bounds it (capstan proj create ${name} --parent PARENT)`
    : `only admins may change project ${name}: it has no spec.parentProject, so nothing bounds it`;
}

function requireSelfService(
  before: AppProject | undefined,
  after: AppProject,
  command: { isAdmin: boolean; checkedParent: string | undefined },
): void {
  const refusal = selfServiceRefusal(before, after, command.isAdmin);
  if (refusal !== null) throw new PermissionDeniedError(refusal);
  // The caller's rights on the old parent were checked against what it read; if the parent moved
  // since, those checks were about another project.
  if (before !== undefined && before.spec.parentProject !== command.checkedParent)
    throw new FailedPreconditionError(
      `project ${after.metadata.name} changed its parentProject while this write was checked; read it again and retry`,
    );
}

export function decideProject(command: ProjectCommand, state: ProjectState, version: number): ProjectEvent[] {
  switch (command.type) {
    case 'create': {
      const name = command.project.metadata.name;
      if (state.project === undefined) {
        requireSelfService(undefined, command.project, command);
        return [{ type: PROJECT_CREATED, data: { project: command.project, uid: command.uid } }];
      }
      if (sameManifest(state.project, command.project)) return [];
      if (!command.upsert)
        throw new AlreadyExistsError(`project ${name} already exists and differs (use upsert to update it)`);
      requireSelfService(state.project, command.project, command);
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
      requireSelfService(state.project, command.project, command);
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
