// Step 4 of a sync attempt: Capstan's own objects to the api (all or nothing, before the cluster is
// touched), then the plan on the cluster as the sync identity (apply/execute.ts).
import { executePlan, type ExecuteOutcome } from '../../apply/execute.js';
import { syncTracking } from '../../apply/ownership.js';
import { isControlPlaneRef } from '../../delivery/control-plane-objects.js';
import { deliverControlPlane } from '../../delivery/deliver.js';
import { StepFailed, type SyncAttempt } from '../sync-attempt.js';
import type { Planned } from './plan.js';

export interface Executed extends Planned {
  outcome: Extract<ExecuteOutcome, { ok: true }>;
  deliveredCounts: { delivered: number; pruned: number };
}

export async function executeOperation(a: SyncAttempt, p: Planned): Promise<Executed | StepFailed> {
  const { deps, request, app, op } = a;
  let deliveredCounts = { delivered: 0, pruned: 0 };
  // The api prunes what a delivery leaves out: a selective sync, which names only some objects,
  // never asks it to prune (Capstan's own objects are pruned by a full sync).
  const pruneDelivered = p.prune && !p.selection.selective;
  if (p.delivered.objects.length > 0 || (pruneDelivered && p.previouslyApplied.some(isControlPlaneRef))) {
    const delivery = await deliverControlPlane(
      deps.delivery,
      {
        application: app,
        operationId: op.operationId,
        objects: p.delivered.objects,
        prune: pruneDelivered,
        dryRun: request.dryRun,
        cascadeDelete: request.cascadeDelete !== undefined,
      },
      a.record,
    );
    if (!delivery.ok) return new StepFailed('apply', delivery.reason);
    deliveredCounts = delivery;
    await a.flush();
  }
  a.lap('deliverMs');
  const outcome = await executePlan(p.cluster, p.plan, {
    dryRun: request.dryRun,
    prune: p.prune,
    pruneCandidates: p.stale,
    hookTimeoutMs: deps.settings.hookTimeoutMs,
    ...(deps.settings.waveTimeoutMs ? { waveTimeoutMs: deps.settings.waveTimeoutMs } : {}),
    ...(deps.health ? { health: deps.health } : {}),
    record: a.record,
    flush: a.flush,
    ...(p.createNamespace ? { createNamespace: p.createNamespace } : {}),
    tracking: syncTracking(app, deps.settings.controlNamespace, p.destNamespace, p.options, {
      db: deps.db,
      server: p.server,
      previouslyApplied: p.previouslyApplied,
    }),
    ...p.execution,
  });
  if (!outcome.ok) return new StepFailed(outcome.phase, outcome.reason);
  return { ...p, outcome, deliveredCounts };
}
