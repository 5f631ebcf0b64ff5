// Executes a planned sync against the target cluster through one TargetCluster (one identity):
// PreSync hooks, then resources and Sync hooks wave by wave with server-side apply, then prune of
// what this Application applied before and no longer declares, then PostSync hooks; SyncFail
// hooks when a phase fails. Every operation is reported to `record` (audit row + event) as it
// happens. A refusal from Kubernetes fails the sync with a message naming the identity, verb,
// resource and namespace. Connection failures propagate (the caller retries the sync later).
import { sameJson } from '@capstan/policy';
import type { ResourceResult } from '../decision/audit.js';
import type { KubeObject } from '../manifests/manifest-source.js';
import {
  httpStatusOf,
  isUnreachable,
  type TargetCluster,
  type WriteOptions,
} from '../kube/target-cluster.js';
import { describeRef, groupOf, type ObjectRef, type PlannedObject, type SyncPlan } from './plan.js';
import { withTracking } from './tracking.js';
import { findSharedResources, type SyncTracking } from './ownership.js';
import type { HealthAssessor } from '@capstan/health';
import { builtinHealth, waitForHookHealth, waitForWaveHealth } from './health-wait.js';
import type { PruneMode } from './sync-options.js';
import { refusal } from './refusal.js';
import { pruneObjects, type ResultOf } from './prune.js';

export interface ExecuteOptions {
  dryRun: boolean;
  prune: boolean;
  /** What prune deletes: applied by the last successful sync, no longer declared (pruneCandidates). */
  pruneCandidates: ObjectRef[];
  hookTimeoutMs: number;
  /** Health of live objects: drives wave progression and hook completion (default: the built-in rules). */
  health?: HealthAssessor;
  /** How long a wave's resources may take to become Healthy (default: hookTimeoutMs). */
  waveTimeoutMs?: number;
  /** Called for every operation as it completes. */
  record: (result: ResourceResult) => void;
  /**
   * Called before each step (a wave, prune) touches the cluster: the results recorded so far are
   * made durable first. The last step's results are the caller's to write (with the terminal event).
   */
  flush: () => Promise<void>;
  /** Objects of one wave applied at the same time (hooks of a wave run one after another). */
  concurrency?: number;
  /** CreateNamespace=true: applied before anything else, not tracked for prune. */
  createNamespace?: KubeObject;
  /**
   * Argo CD's resource tracking: every applied object carries this Application's tracking id; objects
   * live and tracked by another Application are reported (SharedResourceWarning) and, with
   * `FailOnSharedResource=true`, fail the sync before anything is written; prune deletes only what
   * this Application's tracking id marks.
   */
  tracking?: SyncTracking;
  /** Sync options Validate, Replace, Force of one object (apply/sync-options.ts writeMode). */
  writeMode?: (o: PlannedObject) => Omit<WriteOptions, 'dryRun'>;
  /**
   * ApplyOutOfSyncOnly, RespectIgnoreDifferences: the live object is read first (as the sync
   * identity) and this decides whether the object is written at all (`skip` says why not) and what.
   */
  beforeWrite?: (
    o: PlannedObject,
    desired: KubeObject,
    live: KubeObject | undefined,
  ) => { skip: string } | { object: KubeObject };
  /** Prune options of a live object no longer declared (its sync-options annotation and the Application's). */
  pruneMode?: (live: unknown) => PruneMode;
  /** Prune=confirm objects are pruned only when confirmed (the Application's deletion-approved). */
  pruneConfirmed?: boolean;
  /** PrunePropagationPolicy (default Background). */
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
}

export type ExecuteOutcome =
  /** kept: prune candidates left in place by their options (Prune=false, unconfirmed Prune=confirm). */
  | { ok: true; applied: number; pruned: number; kept: ObjectRef[] }
  | { ok: false; phase: 'decision' | 'apply' | 'hook' | 'prune'; reason: string };

class PhaseFailure extends Error {
  constructor(
    readonly phase: 'apply' | 'hook' | 'prune',
    message: string,
  ) {
    super(message);
  }
}

export async function executePlan(
  cluster: TargetCluster,
  plan: SyncPlan,
  options: ExecuteOptions,
): Promise<ExecuteOutcome> {
  const result = (
    o: { ref: ObjectRef },
    verb: string,
    status: string,
    httpStatus: number | null,
    message: string,
  ): ResourceResult => ({
    verb: options.dryRun ? `${verb} (dry-run)` : verb,
    group: groupOf(o.ref.apiVersion),
    kind: o.ref.kind,
    namespace: o.ref.namespace ?? null,
    name: o.ref.name,
    status,
    httpStatus,
    message,
  });

  const tracking = options.tracking;
  const health = options.health ?? (await builtinHealth());
  // gitops-engine syncTasks.multiStep: more than one (phase, wave) step in the sync.
  const multiStep = plan.preSync.length + plan.sync.length + plan.postSync.length > 1;
  // The namespace of CreateNamespace=true is not the Application's (never pruned): no tracking id.
  let namespaceStep: PlannedObject | undefined;
  const tracked = (o: PlannedObject): KubeObject =>
    tracking && o !== namespaceStep ? withTracking(o.object, tracking.context, o.ref) : o.object;

  const apply = async (o: PlannedObject): Promise<string | undefined> => {
    try {
      let object = tracked(o);
      // The namespace of CreateNamespace=true is always applied (Argo never replaces a Namespace).
      const mode = o === namespaceStep ? {} : (options.writeMode?.(o) ?? {});
      if (options.beforeWrite && !o.hook && o !== namespaceStep) {
        const prepared = options.beforeWrite(
          o,
          object,
          (await cluster.read(o.ref)) as KubeObject | undefined,
        );
        if ('skip' in prepared) {
          options.record(result(o, 'apply', 'Synced', null, `${describeRef(o.ref)} ${prepared.skip}`));
          return undefined;
        }
        object = prepared.object;
      }
      if (options.dryRun) {
        // What would change: the live object (read as the sync identity) against the server's own
        // dry-run result of the apply, both without the fields the server maintains.
        const live = await cluster.read(o.ref);
        const after = await cluster.apply(object as never, { ...mode, dryRun: true });
        const change =
          live === undefined ? 'would be created' : sameContent(live, after) ? 'unchanged' : 'would change';
        options.record(
          result(
            o,
            'apply',
            'DryRun',
            200,
            `${describeRef(o.ref)} ${change} (server-side dry run as ${cluster.identityName})`,
          ),
        );
        return undefined;
      }
      await cluster.apply(object as never, { ...mode, dryRun: false });
      const how = mode.replace ? (mode.force ? 'replaced (deleted and created)' : 'replaced') : 'applied';
      options.record(
        result(o, 'apply', 'Synced', 200, `${describeRef(o.ref)} ${how} as ${cluster.identityName}`),
      );
      return undefined;
    } catch (err) {
      if (isUnreachable(err)) throw err;
      const message = refusal(cluster, 'apply', o.ref, err);
      options.record(result(o, 'apply', 'SyncFailed', httpStatusOf(err) ?? null, message));
      return message;
    }
  };

  const runHook = async (o: PlannedObject): Promise<string | undefined> => {
    const policies = o.hook!.deletePolicies;
    if (policies.includes('BeforeHookCreation') && !options.dryRun) {
      try {
        if ((await cluster.delete(o.ref, { dryRun: false })) === 'deleted') {
          options.record(
            result(o, 'delete', 'HookDeleted', 200, `${describeRef(o.ref)} deleted before hook creation`),
          );
        }
      } catch (err) {
        if (isUnreachable(err)) throw err;
        const message = refusal(cluster, 'delete', o.ref, err);
        options.record(result(o, 'delete', 'HookFailed', httpStatusOf(err) ?? null, message));
        return message;
      }
    }
    const failed = await apply(o);
    if (failed) return failed;
    if (options.dryRun) return undefined;
    const outcome = await waitForHookHealth(cluster, o, health, options.hookTimeoutMs);
    options.record(result(o, 'wait', outcome.ok ? 'HookSucceeded' : 'HookFailed', null, outcome.message));
    const deleteNow = outcome.ok ? policies.includes('HookSucceeded') : policies.includes('HookFailed');
    if (deleteNow) {
      try {
        await cluster.delete(o.ref, { dryRun: false });
        options.record(
          result(
            o,
            'delete',
            'HookDeleted',
            200,
            `${describeRef(o.ref)} deleted (${outcome.ok ? 'HookSucceeded' : 'HookFailed'})`,
          ),
        );
      } catch (err) {
        if (isUnreachable(err)) throw err;
        options.record(
          result(
            o,
            'delete',
            'HookFailed',
            httpStatusOf(err) ?? null,
            refusal(cluster, 'delete', o.ref, err),
          ),
        );
      }
    }
    return outcome.ok ? undefined : `hook ${describeRef(o.ref)} failed: ${outcome.message}`;
  };

  const runWaves = async (waves: PlannedObject[][], phase: 'apply' | 'hook') => {
    for (const wave of waves) {
      // The previous step's results are on record before this wave touches the cluster.
      await options.flush();
      const failures: string[] = [];
      const resources = wave.filter((o) => !o.hook);
      // Objects of one wave do not depend on each other (that is what waves are for): apply them together.
      const queue = [...resources];
      await Promise.all(
        Array.from({ length: Math.min(options.concurrency ?? 8, queue.length) }, async () => {
          for (let o = queue.shift(); o !== undefined; o = queue.shift()) {
            const failed = await apply(o);
            if (failed) failures.push(failed);
          }
        }),
      );
      for (const o of wave.filter((x) => x.hook)) {
        const failed = await runHook(o);
        if (failed) failures.push(failed);
      }
      if (failures.length > 0) throw new PhaseFailure(phase, failures.join('; '));
      // A sync of several steps goes on only once this wave's resources are Healthy (Argo CD).
      if (multiStep && !options.dryRun && resources.length > 0) {
        const waited = await waitForWaveHealth(
          cluster,
          resources,
          health,
          options.waveTimeoutMs ?? options.hookTimeoutMs,
        );
        for (const [o, h] of waited.seen)
          if (h)
            options.record(
              result(o, 'wait', h.status, null, h.message ?? `${describeRef(o.ref)} is ${h.status}`),
            );
        if (waited.failure) throw new PhaseFailure(phase, waited.failure);
      }
    }
  };

  if (tracking) {
    const shared = await findSharedResources(
      cluster,
      plan.resources.map((o) => o.ref),
      tracking,
      options.concurrency ?? 8,
    );
    for (const s of shared)
      options.record(result({ ref: s.ref }, 'check', 'SharedResourceWarning', null, s.message));
    if (tracking.failOnShared && shared.length > 0)
      return {
        ok: false,
        phase: 'decision',
        reason: `Shared resource found: ${shared.map((s) => s.message).join('; ')}`,
      };
  }

  try {
    if (options.createNamespace) {
      const ns = options.createNamespace;
      namespaceStep = {
        object: ns,
        ref: { apiVersion: 'v1', kind: 'Namespace', name: ns.metadata.name },
        group: '',
        wave: 0,
      };
      await runWaves([[namespaceStep]], 'apply');
    }
    await runWaves(plan.preSync, 'hook');
    // Prune before the Sync waves (Argo CD prunes an object before the applies of its wave), and
    // what PruneLast marks as a final wave after them.
    const early = options.prune
      ? await prune(cluster, options, result, options.pruneCandidates, false)
      : { pruned: 0, kept: [], deferred: [] };
    await runWaves(plan.sync, 'apply');
    const last = early.deferred.length
      ? await prune(cluster, options, result, early.deferred, true)
      : { pruned: 0, kept: [], deferred: [] };
    await runWaves(plan.postSync, 'hook');
    return {
      ok: true,
      applied: plan.resources.length,
      pruned: early.pruned + last.pruned,
      kept: [...early.kept, ...last.kept],
    };
  } catch (err) {
    if (!(err instanceof PhaseFailure)) throw err;
    try {
      await runWaves(plan.syncFail, 'hook');
    } catch (hookErr) {
      if (!(hookErr instanceof PhaseFailure)) throw hookErr;
      return {
        ok: false,
        phase: err.phase,
        reason: `${err.message}; SyncFail hooks failed too: ${hookErr.message}`,
      };
    }
    return { ok: false, phase: err.phase, reason: err.message };
  }
}

async function prune(
  cluster: TargetCluster,
  options: ExecuteOptions,
  result: ResultOf,
  candidates: readonly ObjectRef[],
  lastWave: boolean,
) {
  const out = await pruneObjects(cluster, options, result, candidates, lastWave);
  if (out.failures.length > 0) throw new PhaseFailure('prune', out.failures.join('; '));
  return out;
}

/** Equal apart from what the API server maintains (resourceVersion, managedFields, status, …). */
function sameContent(a: unknown, b: unknown): boolean {
  const strip = (o: unknown) => {
    const {
      metadata,
      status: _status,
      ...rest
    } = (o ?? {}) as { metadata?: Record<string, unknown>; status?: unknown };
    const {
      resourceVersion: _rv,
      managedFields: _mf,
      generation: _g,
      creationTimestamp: _c,
      uid: _u,
      ...meta
    } = metadata ?? {};
    return { ...rest, metadata: meta };
  };
  return sameJson(strip(a), strip(b));
}
