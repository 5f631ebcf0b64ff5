// Step 5 of a sync attempt: the success on record: sync.succeeded, what the Application now applies
// (for the next prune and cascade deletion), the operation's terminal state, in one transaction.
import { newEvent, syncSucceeded } from '@capstan/events';
import { refKey, type ObjectRef } from '../../apply/plan.js';
import { replaceApplied } from '../../apply/applied-resources.repository.js';
import { isControlPlaneRef, refOf } from '../../delivery/control-plane-objects.js';
import type { Outcome, SyncAttempt } from '../sync-attempt.js';
import type { Executed } from './execute.js';

export async function recordSuccess(a: SyncAttempt, x: Executed): Promise<Outcome> {
  const { request, app, op } = a;
  const { outcome, deliveredCounts, prune, previouslyApplied } = x;
  const resources = outcome.applied + deliveredCounts.delivered;
  const pruned = outcome.pruned + deliveredCounts.pruned;
  a.events.push(
    newEvent(
      syncSucceeded.type,
      {
        operationId: op.operationId,
        application: app,
        revision: x.decided.rendered.revision,
        ...(x.decided.rendered.revisions ? { revisions: x.decided.rendered.revisions } : {}),
        dryRun: request.dryRun,
        identity: a.identity!,
        resources,
        pruned,
      },
      a.meta,
    ),
  );
  a.lap('applyMs');
  // Control-plane objects no longer delivered stay on record until a sync prunes them (the api
  // is asked to prune only when this record says something was delivered); so do cluster objects
  // left in place (no prune asked, Prune=false, Prune=confirm not confirmed): they still require pruning.
  const deliveredNow = x.delivered.objects.map(refOf);
  const selective = x.selection.selective;
  const notPruned =
    prune && !selective
      ? []
      : previouslyApplied.filter(
          (r) => isControlPlaneRef(r) && !deliveredNow.some((d) => refKey(d) === refKey(r)),
        );
  const left = prune ? outcome.kept : x.stale;
  // A selective sync leaves what it did not name on record as it was (still the Application's).
  const untouched = selective ? previouslyApplied.filter((r) => !x.selection.includesRef(r)) : [];
  const applied = uniqueRefs([
    ...x.plan.resources.map((o) => o.ref),
    ...deliveredNow,
    ...notPruned,
    ...left,
    ...untouched,
  ]);
  const warnings = x.options.warnings.length;
  const finished = await a.finish(
    'succeeded',
    warnings > 0 ? `synced (${warnings} sync option warning${warnings > 1 ? 's' : ''})` : 'synced',
    async (trx) => {
      // Usually a sync applies what it applied last time: nothing to rewrite then.
      if (!request.dryRun && !sameRefs(previouslyApplied, applied))
        await replaceApplied(trx, app, x.server, applied);
    },
  );
  a.lap('finishMs');
  a.log.info(
    {
      resources,
      pruned,
      identity: a.identity,
      timings: a.timings,
      totalMs: Math.round(performance.now() - a.startedAt),
    },
    'sync succeeded',
  );
  return finished ? 'succeeded' : 'lost';
}

function uniqueRefs(refs: readonly ObjectRef[]): ObjectRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => !seen.has(refKey(r)) && (seen.add(refKey(r)), true));
}

function sameRefs(a: readonly ObjectRef[], b: readonly ObjectRef[]): boolean {
  if (a.length !== b.length) return false;
  const keys = new Set(a.map(refKey));
  return keys.size === a.length && b.every((r) => keys.has(refKey(r)));
}
