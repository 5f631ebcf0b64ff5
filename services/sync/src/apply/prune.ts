// Prune: what this Application applied and no longer declares is deleted as the sync identity,
// only when its live tracking id names this Application, and as its sync options say (Prune=false,
// Prune=confirm, PruneLast, PrunePropagationPolicy; see sync-options.ts).
import type { ResourceResult } from '../decision/audit.js';
import { httpStatusOf, isUnreachable } from '../kube/kube-errors.js';
import { type TargetCluster } from '../kube/target-cluster.js';
import { describeRef, type ObjectRef } from './plan.js';
import { deleteIfOwned } from './ownership.js';
import { refusal } from './refusal.js';
import type { ExecuteOptions } from './execute.js';

export interface PruneOutcome {
  pruned: number;
  /** Left in place by their options (Prune=false, unconfirmed Prune=confirm). */
  kept: ObjectRef[];
  /** PruneLast: for the final wave. */
  deferred: ObjectRef[];
  /** Refusals, one message each. */
  failures: string[];
}

export type ResultOf = (
  o: { ref: ObjectRef },
  verb: string,
  status: string,
  httpStatus: number | null,
  message: string,
) => ResourceResult;

/**
 * Deletes what this Application applied and no longer declares, when its live tracking id names
 * this Application, as its options say: Prune=false and unconfirmed Prune=confirm leave it (kept),
 * PruneLast defers it to the final wave (unless this is that wave).
 */
export async function pruneObjects(
  cluster: TargetCluster,
  options: ExecuteOptions,
  result: ResultOf,
  candidates: readonly ObjectRef[],
  lastWave: boolean,
): Promise<PruneOutcome> {
  await options.flush();
  const out: PruneOutcome = { pruned: 0, kept: [], deferred: [], failures: [] };
  // Reverse kind order would be nicer; deleting namespaced objects before namespaces is enough here.
  const stale = [...candidates].sort(
    (a, b) => (a.kind === 'Namespace' ? 1 : 0) - (b.kind === 'Namespace' ? 1 : 0),
  );
  const skipped = (ref: ObjectRef, message: string) =>
    options.record(result({ ref }, 'delete', 'PruneSkipped', null, `${describeRef(ref)} ${message}`));
  const decide = (ref: ObjectRef) => (live: unknown) => {
    const mode = options.pruneMode?.(live) ?? { prune: 'true', last: false };
    if (mode.last && !lastWave) return 'defer' as const;
    if (mode.prune === 'false') return { keep: 'ignored (no prune): Prune=false' };
    if (mode.prune === 'confirm' && !options.pruneConfirmed)
      return {
        keep: `not pruned: waiting for pruning confirmation of ${ref.apiVersion}/${ref.kind}/${ref.name} (Prune=confirm): annotate the Application with argocd.argoproj.io/deletion-approved=<ISO time now> and sync again`,
      };
    return 'delete' as const;
  };
  const propagationPolicy = options.propagationPolicy ?? 'Background';
  for (const ref of stale) {
    try {
      const r = options.tracking
        ? await deleteIfOwned(cluster, ref, options.tracking.context, {
            dryRun: options.dryRun,
            propagationPolicy,
            decide: decide(ref),
          })
        : { outcome: await cluster.delete(ref, { dryRun: options.dryRun, propagationPolicy }) };
      if (r.outcome === 'deferred') {
        out.deferred.push(ref);
        continue;
      }
      if (r.outcome === 'kept') {
        out.kept.push(ref);
        skipped(ref, r.reason);
        continue;
      }
      if (r.outcome === 'not-owned') {
        skipped(
          ref,
          `not pruned: ${r.owner ? `its tracking id names application ${r.owner}` : 'it carries no tracking id of this application'}`,
        );
        continue;
      }
      out.pruned++;
      const gone = r.outcome === 'absent';
      options.record(
        result(
          { ref },
          'delete',
          gone ? 'PrunedAlreadyGone' : 'Pruned',
          gone ? 404 : 200,
          `${describeRef(ref)} pruned as ${cluster.identityName}${lastWave ? ' (PruneLast)' : ''}${propagationPolicy === 'Background' ? '' : ` (${propagationPolicy.toLowerCase()})`}`,
        ),
      );
    } catch (err) {
      if (isUnreachable(err)) throw err;
      const message = refusal(cluster, 'delete', ref, err);
      options.record(result({ ref }, 'delete', 'PruneFailed', httpStatusOf(err) ?? null, message));
      out.failures.push(message);
    }
  }
  return out;
}
