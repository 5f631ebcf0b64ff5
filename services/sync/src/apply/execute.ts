// Executes a planned sync against the target cluster through one TargetCluster (one identity):
// PreSync hooks, then resources and Sync hooks wave by wave with server-side apply, then prune of
// what this Application applied before and no longer declares, then PostSync hooks; SyncFail
// hooks when a phase fails. Every operation is reported to `record` (audit row + event) as it
// happens. A refusal from Kubernetes fails the sync with a message naming the identity, verb,
// resource and namespace. Connection failures propagate (the caller retries the sync later).
import { sameJson } from '@capstan/policy';
import type { ResourceResult } from '../decision/audit.js';
import type { KubeObject } from '../manifests/manifest-source.js';
import { httpStatusOf, isUnreachable } from '../kube/kube-errors.js';
import { type TargetCluster, type WriteOptions } from '../kube/target-cluster.js';
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
  const health = options.health ?? (await builtinHealth());
  return new PlanExecution(cluster, plan, options, health).run();
}

/** One execution of a plan, in named steps: shared-resource check, namespace, waves, prune, hooks. */
class PlanExecution {
  /** The namespace of CreateNamespace=true is not the Application's (never pruned): no tracking id. */
  private namespaceStep: PlannedObject | undefined;
  /** gitops-engine syncTasks.multiStep: more than one (phase, wave) step in the sync. */
  private readonly multiStep: boolean;

  constructor(
    private readonly cluster: TargetCluster,
    private readonly plan: SyncPlan,
    private readonly options: ExecuteOptions,
    private readonly health: HealthAssessor,
  ) {
    this.multiStep = plan.preSync.length + plan.sync.length + plan.postSync.length > 1;
  }

  readonly result: ResultOf = (o, verb, status, httpStatus, message) => ({
    verb: this.options.dryRun ? `${verb} (dry-run)` : verb,
    group: groupOf(o.ref.apiVersion),
    kind: o.ref.kind,
    namespace: o.ref.namespace ?? null,
    name: o.ref.name,
    status,
    httpStatus,
    message,
  });

  async run(): Promise<ExecuteOutcome> {
    const refused = await this.checkSharedResources();
    if (refused) return refused;
    try {
      return await this.runPhases();
    } catch (err) {
      if (!(err instanceof PhaseFailure)) throw err;
      return this.runSyncFailHooks(err);
    }
  }

  /** CreateNamespace, PreSync, early prune, Sync waves, PruneLast prune, PostSync. */
  private async runPhases(): Promise<ExecuteOutcome> {
    const { options, plan } = this;
    if (options.createNamespace) {
      const ns = options.createNamespace;
      this.namespaceStep = {
        object: ns,
        ref: { apiVersion: 'v1', kind: 'Namespace', name: ns.metadata.name },
        group: '',
        wave: 0,
      };
      await this.runWaves([[this.namespaceStep]], 'apply');
    }
    await this.runWaves(plan.preSync, 'hook');
    // Prune before the Sync waves (Argo CD prunes an object before the applies of its wave), and
    // what PruneLast marks as a final wave after them.
    const early = options.prune
      ? await prune(this.cluster, options, this.result, options.pruneCandidates, false)
      : { pruned: 0, kept: [], deferred: [] };
    await this.runWaves(plan.sync, 'apply');
    const last = early.deferred.length
      ? await prune(this.cluster, options, this.result, early.deferred, true)
      : { pruned: 0, kept: [], deferred: [] };
    await this.runWaves(plan.postSync, 'hook');
    return {
      ok: true,
      applied: plan.resources.length,
      pruned: early.pruned + last.pruned,
      kept: [...early.kept, ...last.kept],
    };
  }

  private async runSyncFailHooks(err: PhaseFailure): Promise<ExecuteOutcome> {
    try {
      await this.runWaves(this.plan.syncFail, 'hook');
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

  /** Objects live and tracked by another Application: reported, and with FailOnSharedResource a refusal. */
  private async checkSharedResources(): Promise<ExecuteOutcome | undefined> {
    const { tracking } = this.options;
    if (!tracking) return undefined;
    const shared = await findSharedResources(
      this.cluster,
      this.plan.resources.map((o) => o.ref),
      tracking,
      this.options.concurrency ?? 8,
    );
    for (const s of shared)
      this.options.record(this.result({ ref: s.ref }, 'check', 'SharedResourceWarning', null, s.message));
    if (tracking.failOnShared && shared.length > 0)
      return {
        ok: false,
        phase: 'decision',
        reason: `Shared resource found: ${shared.map((s) => s.message).join('; ')}`,
      };
    return undefined;
  }

  private tracked(o: PlannedObject): KubeObject {
    const { tracking } = this.options;
    return tracking && o !== this.namespaceStep ? withTracking(o.object, tracking.context, o.ref) : o.object;
  }

  /** Applies one object (or dry-runs it); a refusal is recorded and returned as the failure message. */
  private async apply(o: PlannedObject): Promise<string | undefined> {
    const { cluster, options } = this;
    try {
      let object = this.tracked(o);
      // The namespace of CreateNamespace=true is always applied (Argo never replaces a Namespace).
      const mode = o === this.namespaceStep ? {} : (options.writeMode?.(o) ?? {});
      if (options.beforeWrite && !o.hook && o !== this.namespaceStep) {
        const prepared = options.beforeWrite(
          o,
          object,
          (await cluster.read(o.ref)) as KubeObject | undefined,
        );
        if ('skip' in prepared) {
          options.record(this.result(o, 'apply', 'Synced', null, `${describeRef(o.ref)} ${prepared.skip}`));
          return undefined;
        }
        object = prepared.object;
      }
      if (options.dryRun) return await this.dryRun(o, object, mode);
      await cluster.apply(object as never, { ...mode, dryRun: false });
      const how = mode.replace ? (mode.force ? 'replaced (deleted and created)' : 'replaced') : 'applied';
      options.record(
        this.result(o, 'apply', 'Synced', 200, `${describeRef(o.ref)} ${how} as ${cluster.identityName}`),
      );
      return undefined;
    } catch (err) {
      if (isUnreachable(err)) throw err;
      const message = refusal(cluster, 'apply', o.ref, err);
      options.record(this.result(o, 'apply', 'SyncFailed', httpStatusOf(err) ?? null, message));
      return message;
    }
  }

  /**
   * What would change: the live object (read as the sync identity) against the server's own dry-run
   * result of the apply, both without the fields the server maintains.
   */
  private async dryRun(
    o: PlannedObject,
    object: KubeObject,
    mode: Omit<WriteOptions, 'dryRun'>,
  ): Promise<undefined> {
    const live = await this.cluster.read(o.ref);
    const after = await this.cluster.apply(object as never, { ...mode, dryRun: true });
    const change =
      live === undefined ? 'would be created' : sameContent(live, after) ? 'unchanged' : 'would change';
    this.options.record(
      this.result(
        o,
        'apply',
        'DryRun',
        200,
        `${describeRef(o.ref)} ${change} (server-side dry run as ${this.cluster.identityName})`,
      ),
    );
    return undefined;
  }

  /** A hook: BeforeHookCreation delete, apply, wait for its health, then its delete policy. */
  private async runHook(o: PlannedObject): Promise<string | undefined> {
    const policies = o.hook!.deletePolicies;
    if (policies.includes('BeforeHookCreation') && !this.options.dryRun) {
      const refused = await this.deleteHook(o, 'before hook creation', false);
      if (refused) return refused;
    }
    const failed = await this.apply(o);
    if (failed) return failed;
    if (this.options.dryRun) return undefined;
    const outcome = await waitForHookHealth(this.cluster, o, this.health, this.options.hookTimeoutMs);
    this.options.record(
      this.result(o, 'wait', outcome.ok ? 'HookSucceeded' : 'HookFailed', null, outcome.message),
    );
    const deleteNow = outcome.ok ? policies.includes('HookSucceeded') : policies.includes('HookFailed');
    // A hook that ran is deleted by its policy; a failure to delete it does not fail the sync.
    if (deleteNow) await this.deleteHook(o, outcome.ok ? '(HookSucceeded)' : '(HookFailed)', true);
    return outcome.ok ? undefined : `hook ${describeRef(o.ref)} failed: ${outcome.message}`;
  }

  /**
   * Deletes a hook object; records HookDeleted (when it existed, or always with `reportAbsent`), or
   * HookFailed and returns the refusal.
   */
  private async deleteHook(
    o: PlannedObject,
    why: string,
    reportAbsent: boolean,
  ): Promise<string | undefined> {
    try {
      const outcome = await this.cluster.delete(o.ref, { dryRun: false });
      if (outcome === 'deleted' || reportAbsent)
        this.options.record(
          this.result(o, 'delete', 'HookDeleted', 200, `${describeRef(o.ref)} deleted ${why}`),
        );
      return undefined;
    } catch (err) {
      if (isUnreachable(err)) throw err;
      const message = refusal(this.cluster, 'delete', o.ref, err);
      this.options.record(this.result(o, 'delete', 'HookFailed', httpStatusOf(err) ?? null, message));
      return message;
    }
  }

  private async runWaves(waves: PlannedObject[][], phase: 'apply' | 'hook'): Promise<void> {
    for (const wave of waves) {
      // The previous step's results are on record before this wave touches the cluster.
      await this.options.flush();
      const resources = wave.filter((o) => !o.hook);
      const failures = await this.applyTogether(resources);
      for (const o of wave.filter((x) => x.hook)) {
        const failed = await this.runHook(o);
        if (failed) failures.push(failed);
      }
      if (failures.length > 0) throw new PhaseFailure(phase, failures.join('; '));
      // A sync of several steps goes on only once this wave's resources are Healthy (Argo CD).
      if (this.multiStep && !this.options.dryRun && resources.length > 0)
        await this.waitForWave(resources, phase);
    }
  }

  /** Objects of one wave do not depend on each other (that is what waves are for): apply them together. */
  private async applyTogether(resources: PlannedObject[]): Promise<string[]> {
    const failures: string[] = [];
    const queue = [...resources];
    await Promise.all(
      Array.from({ length: Math.min(this.options.concurrency ?? 8, queue.length) }, async () => {
        for (let o = queue.shift(); o !== undefined; o = queue.shift()) {
          const failed = await this.apply(o);
          if (failed) failures.push(failed);
        }
      }),
    );
    return failures;
  }

  private async waitForWave(resources: PlannedObject[], phase: 'apply' | 'hook'): Promise<void> {
    const waited = await waitForWaveHealth(
      this.cluster,
      resources,
      this.health,
      this.options.waveTimeoutMs ?? this.options.hookTimeoutMs,
    );
    for (const [o, h] of waited.seen)
      if (h)
        this.options.record(
          this.result(o, 'wait', h.status, null, h.message ?? `${describeRef(o.ref)} is ${h.status}`),
        );
    if (waited.failure) throw new PhaseFailure(phase, waited.failure);
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
