// Health drives sync waves and hooks, as gitops-engine's sync context does (pkg/sync/sync_context.go):
// - in a sync of more than one step (waves, phases), a wave's resources are "running" after apply
//   until their live health is Healthy (or their kind has no health rule); Degraded fails the sync
//   phase ("one or more synchronization tasks completed unsuccessfully"), then SyncFail hooks run;
// - a hook of any kind is done when its health says so (getOperationPhase): Healthy or no rule =
//   succeeded, Degraded or Unknown = failed, Progressing or Suspended = still running.
// Live objects are read as the sync identity. Waits are bounded (sync.wave-timeout-ms,
// sync.hook-timeout-ms): Argo waits without bound; Capstan fails the phase instead of hanging.
import { createHealthAssessor, type HealthAssessor, type HealthStatus } from '@capstan/health';
import type { TargetCluster } from '../kube/target-cluster.js';
import { groupOf, type ObjectRef, type PlannedObject } from './plan.js';

let builtins: Promise<HealthAssessor> | undefined;
/** The built-in rules, for callers that pass no assessor. */
export const builtinHealth = (): Promise<HealthAssessor> => (builtins ??= createHealthAssessor());

/** "apps/Deployment/web", as Argo names a task in its messages. */
export const taskName = (ref: ObjectRef): string => `${groupOf(ref.apiVersion)}/${ref.kind}/${ref.name}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface WaveHealth {
  /** Health per resource as last seen (undefined: no health rule). */
  seen: Map<PlannedObject, HealthStatus | undefined>;
  /** Why the wave failed, or undefined when every resource is Healthy or has no rule. */
  failure?: string;
}

/** Waits until every resource of a wave is Healthy (or has no rule), one is Degraded or missing, or the time is up. */
export async function waitForWaveHealth(
  cluster: TargetCluster,
  resources: readonly PlannedObject[],
  health: HealthAssessor,
  timeoutMs: number,
): Promise<WaveHealth> {
  const seen = new Map<PlannedObject, HealthStatus | undefined>();
  let pending = [...resources];
  const deadline = Date.now() + timeoutMs;
  for (let delay = 200; ; delay = Math.min(delay * 2, 2_000)) {
    const failures: string[] = [];
    const still: PlannedObject[] = [];
    for (const o of pending) {
      const live = await cluster.read(o.ref);
      if (live === undefined) {
        failures.push(`Resource ${taskName(o.ref)} is missing, it might have been deleted`);
        seen.set(o, { status: 'Missing' });
        continue;
      }
      const h = health.assess(live as never);
      seen.set(o, h);
      if (h === undefined || h.status === 'Healthy') continue;
      if (h.status === 'Degraded') failures.push(`${taskName(o.ref)}: ${h.message ?? 'Degraded'}`);
      else still.push(o);
    }
    if (failures.length > 0)
      return {
        seen,
        failure: `one or more synchronization tasks completed unsuccessfully, reason: ${failures.join(',')}`,
      };
    pending = still;
    if (pending.length === 0) return { seen };
    if (Date.now() >= deadline) {
      const first = pending[0]!;
      const h = seen.get(first);
      return {
        seen,
        failure:
          `timed out after ${timeoutMs} ms waiting for healthy state of ${taskName(first.ref)}` +
          (pending.length > 1 ? ` and ${pending.length - 1} more resources` : '') +
          (h ? ` (${h.status}${h.message ? `: ${h.message}` : ''})` : ''),
      };
    }
    await sleep(Math.min(delay, Math.max(0, deadline - Date.now())));
  }
}

/** A hook's completion by its health (gitops-engine syncContext.getOperationPhase). */
export async function waitForHookHealth(
  cluster: TargetCluster,
  o: PlannedObject,
  health: HealthAssessor,
  timeoutMs: number,
): Promise<{ ok: boolean; message: string }> {
  const name = o.ref.name;
  const deadline = Date.now() + timeoutMs;
  let last: HealthStatus | undefined;
  for (let delay = 200; ; delay = Math.min(delay * 2, 5_000)) {
    const live = await cluster.read(o.ref);
    if (!live) return { ok: false, message: `${taskName(o.ref)} disappeared while running` };
    last = health.assess(live as never);
    if (last === undefined) return { ok: true, message: `${name} created` };
    switch (last.status) {
      case 'Healthy':
        return { ok: true, message: last.message || `${name} succeeded` };
      case 'Degraded':
      case 'Unknown':
        return { ok: false, message: `${last.status}${last.message ? `: ${last.message}` : ''}` };
    }
    if (Date.now() >= deadline) break;
    await sleep(Math.min(delay, Math.max(0, deadline - Date.now())));
  }
  return {
    ok: false,
    message: `did not finish within ${timeoutMs} ms (${last.status}${last.message ? `: ${last.message}` : ''})`,
  };
}
