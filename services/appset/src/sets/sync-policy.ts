// spec.syncPolicy as Argo CD applies it to the Applications a set generates (applicationset_types.go:
// ApplicationsSyncPolicy.AllowUpdate/AllowDelete; no policy means `sync`), mapped onto the api's
// ApplicationSetWritesService.Apply flags. Pure.
import type { ApplicationSet } from '@capstan/appset-engine';

export type ApplicationsSync = 'create-only' | 'create-update' | 'create-delete' | 'sync';

export interface ApplyPolicy {
  /** Generated Applications that exist and differ are updated. */
  allowUpdate: boolean;
  /** Owned Applications the set no longer generates are deleted. */
  deleteMissing: boolean;
  /** Deleted Applications leave their cluster objects (no resources finalizer). */
  preserveResources: boolean;
}

export function applicationsSyncOf(appset: Pick<ApplicationSet, 'spec'>): ApplicationsSync {
  return appset.spec.syncPolicy?.applicationsSync ?? 'sync';
}

export function applyPolicy(appset: Pick<ApplicationSet, 'spec'>): ApplyPolicy {
  const policy = applicationsSyncOf(appset);
  return {
    allowUpdate: policy === 'create-update' || policy === 'sync',
    deleteMissing: policy === 'create-delete' || policy === 'sync',
    preserveResources: appset.spec.syncPolicy?.preserveResourcesOnDeletion === true,
  };
}

/**
 * What deleting the set does to its Applications. Argo CD deletes them with the set only when the
 * policy allows deletes; under create-only and create-update it removes its owner references and
 * the Applications stay (applicationset_controller.go, DeletionTimestamp branch).
 */
export function deletePolicy(appset: Pick<ApplicationSet, 'spec'>): {
  deleteApplications: boolean;
  preserveResources: boolean;
} {
  const p = applyPolicy(appset);
  return { deleteApplications: p.deleteMissing, preserveResources: p.preserveResources };
}
