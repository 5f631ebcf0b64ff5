// Ownership against the live cluster, read as the sync identity: which declared objects another
// Application already tracks (before a sync applies anything), and the one way prune and cascade
// deletion delete an object — only when its live tracking id names this Application.
import { trackingAppName } from '@capstan/policy';
import { httpStatusOf, isUnreachable } from '../kube/kube-errors.js';
import { type TargetCluster } from '../kube/target-cluster.js';
import type { SyncDbOrTrx } from '../sync.table.js';
import { refKey, type ObjectRef } from './plan.js';
import { ownershipOf, sharedResourceMessage, trackingContext, type TrackingContext } from './tracking.js';
import { otherAppliers } from './applied-resources.repository.js';

/** What a sync knows without reading the cluster: what it applied last, and who else applied what. */
export interface AppliedRecord {
  previouslyApplied: readonly ObjectRef[];
  /** The other Applications that applied these objects (by refKey). */
  others(refs: readonly ObjectRef[]): Promise<Map<string, { namespace: string; name: string }>>;
}

export interface SyncTracking {
  context: TrackingContext;
  failOnShared: boolean;
  record?: AppliedRecord | undefined;
}

/** What a sync of this Application tracks (executePlan's `tracking`), FailOnSharedResource from its options. */
export function syncTracking(
  app: { namespace: string; name: string },
  controlNamespace: string,
  destinationNamespace: string,
  syncOptions: { failOnSharedResource: boolean },
  record?: { db: SyncDbOrTrx; server: string; previouslyApplied: readonly ObjectRef[] },
): SyncTracking {
  return {
    context: trackingContext(app, controlNamespace, destinationNamespace),
    failOnShared: syncOptions.failOnSharedResource,
    ...(record
      ? {
          record: {
            previouslyApplied: record.previouslyApplied,
            others: (refs) => otherAppliers(record.db, app, record.server, refs),
          },
        }
      : {}),
  };
}

export interface SharedResource {
  ref: ObjectRef;
  /** Argo CD's SharedResourceWarning message. */
  message: string;
}

/**
 * The declared objects another Application tracks. An object this Application applied in its last
 * sync is checked against the other Applications' records of what they applied (one query: taking
 * it over means applying it); any other object is read from the cluster and its live tracking id
 * decides. An object the identity may not read is not reported (the apply that follows is
 * authorised by the API server on its own).
 */
export async function findSharedResources(
  cluster: TargetCluster,
  refs: readonly ObjectRef[],
  tracking: SyncTracking,
  concurrency = 8,
): Promise<SharedResource[]> {
  const ctx = tracking.context;
  const known = new Set((tracking.record?.previouslyApplied ?? []).map(refKey));
  const shared: SharedResource[] = [];
  const recorded = refs.filter((r) => known.has(refKey(r)));
  if (recorded.length > 0) {
    const others = await tracking.record!.others(recorded);
    for (const ref of recorded) {
      const other = others.get(refKey(ref));
      if (other)
        shared.push({
          ref,
          message: sharedResourceMessage(ctx, ref, trackingAppName(other, ctx.controlNamespace)),
        });
    }
  }
  const queue = refs.filter((r) => !known.has(refKey(r)));
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
  | { outcome: 'not-owned'; owner: string | null }
  /** This Application's, left in place by its sync options (Prune=false, Delete=false, …). */
  | { outcome: 'kept'; reason: string }
  /** This Application's, to be deleted later (PruneLast). */
  | { outcome: 'deferred' };

/**
 * Reads the object and deletes it only when its live tracking id names this Application and this
 * object, and `decide` (its sync options, read from the live object) lets it go now. Kubernetes
 * refusals (a 403 on the read or the delete) are thrown for the caller to report.
 */
export async function deleteIfOwned(
  cluster: TargetCluster,
  ref: ObjectRef,
  ctx: TrackingContext,
  options: {
    dryRun: boolean;
    propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
    decide?: (live: unknown) => 'delete' | 'defer' | { keep: string };
  },
): Promise<OwnedDeletion> {
  const live = (await cluster.read(ref)) as { metadata?: { deletionTimestamp?: unknown } } | undefined;
  if (live === undefined) return { outcome: 'absent' };
  const owner = ownershipOf(live, ctx, ref);
  if (owner.kind !== 'owned')
    return { outcome: 'not-owned', owner: owner.kind === 'other' ? owner.instance : null };
  if (live.metadata?.deletionTimestamp) return { outcome: 'terminating' };
  const verdict = options.decide?.(live) ?? 'delete';
  if (verdict === 'defer') return { outcome: 'deferred' };
  if (verdict !== 'delete') return { outcome: 'kept', reason: verdict.keep };
  const r = await cluster.delete(ref, options);
  return r === 'deleted' ? { outcome: 'deleted' } : { outcome: 'absent' };
}
