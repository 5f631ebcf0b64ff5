// Ownership against the live cluster, read as the sync identity: which declared objects another
// Application already tracks (before a sync applies anything), and the one way prune and cascade
// deletion delete an object — only when its live tracking id names this Application.
import { httpStatusOf, isUnreachable, type TargetCluster } from '../kube/target-cluster.js';
import type { ObjectRef } from './plan.js';
import { ownershipOf, sharedResourceMessage, type TrackingContext } from './tracking.js';

export interface SharedResource {
  ref: ObjectRef;
  /** Argo CD's SharedResourceWarning message. */
  message: string;
}

/**
 * The declared objects that are live and tracked by another Application. An object the identity
 * may not read is not reported (the apply that follows is authorised by the API server on its own).
 */
export async function findSharedResources(
  cluster: TargetCluster,
  refs: readonly ObjectRef[],
  ctx: TrackingContext,
  concurrency = 8,
): Promise<SharedResource[]> {
  const queue = [...refs];
  const shared: SharedResource[] = [];
  await Promise.all(
    Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
      for (let ref = queue.shift(); ref !== undefined; ref = queue.shift()) {
        let live: unknown;
        try {
          live = await cluster.read(ref);
        } catch (err) {
          if (isUnreachable(err) || httpStatusOf(err) !== 403) throw err;
          continue;
        }
        if (live === undefined) continue;
        const owner = ownershipOf(live, ctx, ref);
        if (owner.kind === 'other')
          shared.push({ ref, message: sharedResourceMessage(ctx, ref, owner.instance) });
      }
    }),
  );
  return shared;
}

export type OwnedDeletion =
  /** The delete was issued (the object may stay a while, terminating). */
  | { outcome: 'deleted' }
  /** Already being deleted: nothing issued. */
  | { outcome: 'terminating' }
  | { outcome: 'absent' }
  /** Live, but not this Application's: left alone. */
  | { outcome: 'not-owned'; owner: string | null };

/**
 * Reads the object and deletes it only when its live tracking id names this Application and this
 * object. Kubernetes refusals (a 403 on the read or the delete) are thrown for the caller to report.
 */
export async function deleteIfOwned(
  cluster: TargetCluster,
  ref: ObjectRef,
  ctx: TrackingContext,
  options: { dryRun: boolean; propagationPolicy?: 'Foreground' | 'Background' },
): Promise<OwnedDeletion> {
  const live = (await cluster.read(ref)) as { metadata?: { deletionTimestamp?: unknown } } | undefined;
  if (live === undefined) return { outcome: 'absent' };
  const owner = ownershipOf(live, ctx, ref);
  if (owner.kind !== 'owned')
    return { outcome: 'not-owned', owner: owner.kind === 'other' ? owner.instance : null };
  if (live.metadata?.deletionTimestamp) return { outcome: 'terminating' };
  const r = await cluster.delete(ref, options);
  return r === 'deleted' ? { outcome: 'deleted' } : { outcome: 'absent' };
}
