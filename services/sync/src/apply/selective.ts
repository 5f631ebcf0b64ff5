// Argo CD's selective sync (SyncOperation.resources; `argocd app sync --resource`): only the named
// resources are applied, prune deletes only those of them git no longer declares, and hooks do
// not run (gitops-engine's skipHooks for a sync with resources). Matching is Argo CD's
// SyncOperationResource.HasIdentity: group, kind and name exactly; an empty namespace matches any.
// Pure functions: the sync's steps filter with them.
import { groupOf, HOOK_ANNOTATION, type ObjectRef } from './plan.js';
import type { KubeObject } from '../manifests/manifest-source.js';

export interface SyncResource {
  group: string;
  kind: string;
  name: string;
  namespace: string;
}

interface Identity {
  group: string;
  kind: string;
  name: string;
  namespace?: string | null | undefined;
}

/** Argo CD's HasIdentity against one requested resource. */
export function hasIdentity(r: SyncResource, o: Identity): boolean {
  return (
    r.name === o.name &&
    r.kind === o.kind &&
    r.group === o.group &&
    (r.namespace === '' || r.namespace === (o.namespace ?? ''))
  );
}

/** A selection: the whole Application when no resources were named. */
export class Selection {
  private constructor(readonly resources: readonly SyncResource[]) {}

  static of(resources: readonly SyncResource[] | undefined): Selection {
    return new Selection(resources ?? []);
  }

  get selective(): boolean {
    return this.resources.length > 0;
  }

  includes(o: Identity): boolean {
    return !this.selective || this.resources.some((r) => hasIdentity(r, o));
  }

  includesRef(ref: ObjectRef): boolean {
    return this.includes({
      group: groupOf(ref.apiVersion),
      kind: ref.kind,
      name: ref.name,
      namespace: ref.namespace,
    });
  }

  /** The objects a sync applies: the selected ones, hooks left out of a selective sync. */
  objects(objects: readonly KubeObject[]): KubeObject[] {
    if (!this.selective) return [...objects];
    return objects.filter(
      (o) =>
        o.metadata.annotations?.[HOOK_ANNOTATION] === undefined &&
        this.includesRef({
          apiVersion: o.apiVersion,
          kind: o.kind,
          name: o.metadata.name,
          namespace: o.metadata.namespace,
        }),
    );
  }
}
