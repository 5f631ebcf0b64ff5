// One attempt of a cascade deletion (Argo CD's resources finalizer), an operation of the same
// durable queue as syncs (claimed, leased, one per Application at a time). Every object the
// Application applied to its destination is read and deleted only when its live tracking id names
// this Application, as the project's resolved ServiceAccount — the same decision a sync makes,
// recorded the same way (audit.sync_decisions, audit.resource_results). A refusal or an
// unreachable cluster is reported (sync.deletion-failed: the api shows DeletionError) and the
// operation goes back to the queue with backoff; objects still terminating are waited for. When
// nothing owned is left, sync.deletion-succeeded ends the operation and the api removes the Application.
// What the Application delivered from git (AppProjects, Applications) is handed to the api first.
import {
  applicationSubject,
  newEvent,
  syncDeletionFailed,
  syncDeletionSucceeded,
  syncResourceSynced,
} from '@capstan/events';
import type { Envelope } from '@capstan/events';
import type { SyncTrx } from '../sync.table.js';
import { decideSync } from '../decision/decide.js';
import { connectToDestination } from '../decision/destination.js';
import { recordDecision, recordResourceResults, type ResourceResult } from '../decision/audit.js';
import { loadSyncInputs, type SyncInputs } from '../decision/sync-inputs.repository.js';
import { ImpersonationError } from '../kube/kube-config.js';
import { httpStatusOf, isUnreachable, kubeMessageOf } from '../kube/kube-errors.js';
import type { TargetCluster } from '../kube/target-cluster.js';
import { describeRef, groupOf, type ObjectRef } from '../apply/plan.js';
import { deleteIfOwned } from '../apply/ownership.js';
import { trackingContext, type TrackingContext } from '../apply/tracking.js';
import { replaceApplied } from '../apply/applied-resources.repository.js';
import { isControlPlaneRef } from '../delivery/control-plane-objects.js';
import {
  deleteMode,
  deletionApproved,
  parseAppSyncOptions,
  parseResourceSyncOptions,
  type AppSyncOptions,
} from '../apply/sync-options.js';
import { deliverControlPlane } from '../delivery/deliver.js';
import {
  appendOperationEvents,
  finishOperationIn,
  requeueOperation,
  type ClaimedOperation,
} from './operations.repository.js';
import type { SyncRunnerDeps } from './sync-runner.js';

/** What the read model queues for an Application deleted with cascade (read-model.consumer.ts). */
export interface DeletionRequestData {
  operationId: string;
  application: { namespace: string; name: string };
  deletion: { propagationPolicy: 'foreground' | 'background' };
}

export function isDeletionRequest(request: unknown): request is DeletionRequestData {
  return typeof (request as { deletion?: unknown } | null)?.deletion === 'object';
}

/** Backoff after a failed attempt: 1 s doubling to at most a minute, retried for as long as it takes. */
export const deletionRetryMs = (attempt: number) => Math.min(60_000, 1_000 * 2 ** Math.min(attempt - 1, 6));
/** While deleted objects are still terminating (foreground: until their dependents are collected). */
const WAIT_MS = 1_000;

type Identity = { impersonation: boolean; username: string | null };
type Outcome = 'succeeded' | 'failed' | 'requeued' | 'lost';

export function runDeletion(deps: SyncRunnerDeps, op: ClaimedOperation): Promise<Outcome> {
  return new DeletionAttempt(deps, op).run();
}

/** One attempt: its results and events go on record with the operation's next state, in one transaction. */
class DeletionAttempt {
  private readonly request: DeletionRequestData;
  private readonly app: { namespace: string; name: string };
  private readonly log: SyncRunnerDeps['logger'];
  private readonly meta: Parameters<typeof newEvent>[2];
  private readonly results: ResourceResult[] = [];
  private identity: Identity | null = null;
  private auditIdentity = 'none';

  constructor(
    private readonly deps: SyncRunnerDeps,
    private readonly op: ClaimedOperation,
  ) {
    this.request = op.request as DeletionRequestData;
    this.app = this.request.application;
    const { namespace, name } = this.app;
    this.log = deps.logger.child({ operationId: op.operationId, application: `${namespace}/${name}` });
    this.meta = {
      subject: applicationSubject(namespace, name),
      actor: op.actor,
      source: 'capstan/sync',
      causationId: op.triggerEventId,
      ...(op.correlationId ? { correlationId: op.correlationId } : {}),
    };
  }

  async run(): Promise<Outcome> {
    try {
      const inputs = await loadSyncInputs(this.deps.db, this.app);
      if (inputs.application === undefined) return await this.abandon();
      const target = await this.decide(inputs);
      if (typeof target === 'string') return await this.retry(target);
      const applied = inputs.applied.get(target.server) ?? [];
      // Capstan's own objects (AppProjects, Applications delivered from git) are the api's to delete.
      const delivered = await this.deleteDelivered(applied);
      if (delivered !== undefined) return await this.retry(delivered);
      const owned = deletionOrder(applied.filter((r) => !isControlPlaneRef(r)));
      const policy = this.request.deletion.propagationPolicy;
      const manifest = inputs.application as {
        metadata?: { annotations?: Record<string, string> };
        spec?: { syncPolicy?: { syncOptions?: string[] } };
      };
      const keep = {
        options: parseAppSyncOptions(manifest.spec?.syncPolicy?.syncOptions),
        approved: deletionApproved(manifest.metadata?.annotations, undefined),
      };
      const sweep = await deleteOwned(target.cluster, owned, target.ctx, policy, this.results, keep);
      if (sweep.failures.length > 0) return await this.retry(sweep.failures.join('; '));
      if (sweep.remaining > 0) return await this.wait(sweep.remaining);
      // Everything recorded that was not left in place is gone now (deleted by this or an earlier attempt).
      return await this.succeed(target.server, owned.length - sweep.skipped, sweep.skipped);
    } catch (err) {
      if (err instanceof ImpersonationError) return this.retry(err.message);
      const message = err instanceof Error ? err.message : String(err);
      return this.retry(isUnreachable(err) ? `target cluster unreachable: ${message}` : message);
    }
  }

  /** The same decision as a sync's, on record; the cluster as the identity it resolves, or why not. */
  private async decide(
    inputs: SyncInputs,
  ): Promise<string | { server: string; cluster: TargetCluster; ctx: TrackingContext }> {
    const { deps, op, app } = this;
    const decided = await decideSync(
      inputs,
      { ...this.request, dryRun: false, prune: true, cascadeDelete: { application: inputs.application } },
      deps.manifests,
      deps.settings,
    );
    const decision = 'decision' in decided ? decided.decision : decided;
    const { impersonation, strict } = deps.settings;
    const ctx = {
      syncId: op.operationId,
      application: app,
      revision: null,
      impersonation,
      strict,
      attempt: op.attempt,
    };
    await recordDecision(
      deps.audit,
      { ...ctx, triggerEventId: op.triggerEventId, actor: op.actor },
      decision,
      async () => undefined,
    );
    if (!('decision' in decided) || !decided.decision.allowed) return decision.reason;
    const d = decided.decision;
    this.identity = { impersonation: d.impersonation, username: d.username };
    const { cluster, server, destNamespace } = await connectToDestination(deps, decided);
    this.auditIdentity = cluster.identityName;
    return { server, cluster, ctx: trackingContext(app, deps.settings.controlNamespace, destNamespace) };
  }

  /**
   * What the Application delivered (recorded as applied), handed to the api to delete all or nothing
   * as the delivering Application (a delivered Application cascades by its own finalizers); the
   * reason when the api refused.
   */
  private async deleteDelivered(applied: readonly ObjectRef[]): Promise<string | undefined> {
    if (!applied.some(isControlPlaneRef)) return undefined;
    const outcome = await deliverControlPlane(
      this.deps.delivery,
      {
        application: this.app,
        operationId: this.op.operationId,
        objects: [],
        prune: true,
        dryRun: false,
        cascadeDelete: true,
      },
      (r) => this.results.push(r),
    );
    return outcome.ok ? undefined : outcome.reason;
  }

  /** The results on record with `work`, in one group-committed transaction. */
  private commit<R>(work: (trx: SyncTrx) => Promise<R>): Promise<R> {
    const ref = {
      syncId: this.op.operationId,
      application: this.app,
      identity: this.auditIdentity,
      attempt: this.op.attempt,
    };
    return recordResourceResults(this.deps.audit, ref, this.results, (trx) => work(trx as SyncTrx));
  }

  private events(last?: Envelope): Envelope[] {
    const { op, app, identity, meta } = this;
    const results = this.results.map((r) =>
      newEvent(
        syncResourceSynced.type,
        {
          operationId: op.operationId,
          application: app,
          attempt: op.attempt,
          ...r,
          identity: identity ?? { impersonation: false, username: null },
        },
        meta,
      ),
    );
    return last ? [...results, last] : results;
  }

  /** Reports the failure (the api's DeletionError) and puts the operation back with backoff. */
  private async retry(reason: string): Promise<Outcome> {
    const { op, app, identity } = this;
    const retryInMs = deletionRetryMs(op.attempt);
    this.log.warn({ reason, attempt: op.attempt, retryInMs }, 'cascade deletion failed; retrying');
    const failed = newEvent(
      syncDeletionFailed.type,
      { operationId: op.operationId, application: app, reason, identity, attempt: op.attempt, retryInMs },
      this.meta,
    );
    await this.commit(async (trx) => {
      if (await requeueOperation(trx, op, retryInMs, `DeletionError: ${reason}`))
        await appendOperationEvents(trx, op.operationId, this.events(failed));
    });
    return 'requeued';
  }

  /** Deleted objects still terminating: look again shortly (no failure, no backoff). */
  private async wait(remaining: number): Promise<Outcome> {
    this.log.info({ remaining }, 'waiting for deleted resources to go');
    await this.commit(async (trx) => {
      if (await requeueOperation(trx, this.op, WAIT_MS, `waiting for ${remaining} resources to be deleted`))
        await appendOperationEvents(trx, this.op.operationId, this.events());
    });
    return 'requeued';
  }

  private async succeed(server: string, deleted: number, skipped: number): Promise<Outcome> {
    const { op, app, identity } = this;
    const done = newEvent(
      syncDeletionSucceeded.type,
      { operationId: op.operationId, application: app, identity: identity!, deleted, skipped },
      this.meta,
    );
    const finished = await this.commit(async (trx) => {
      const ours = await finishOperationIn(
        trx,
        op,
        'succeeded',
        'resources deleted',
        this.events(done),
        undefined,
      );
      if (ours) await replaceApplied(trx, app, server, []);
      return ours;
    });
    this.log.info({ deleted, skipped, identity }, 'cascade deletion done');
    return finished ? 'succeeded' : 'lost';
  }

  /** Removed meanwhile with cascade=false: its resources stay, nothing is left to do. */
  private async abandon(): Promise<Outcome> {
    await this.commit((trx) =>
      finishOperationIn(trx, this.op, 'failed', 'the application was removed without cascade', [], undefined),
    );
    return 'failed';
  }
}

/** Namespaced objects first, then cluster-scoped ones, namespaces last. */
function deletionOrder(refs: readonly ObjectRef[]): ObjectRef[] {
  const rank = (r: ObjectRef) => (r.kind === 'Namespace' ? 2 : r.namespace ? 0 : 1);
  return [...refs].sort((a, b) => rank(a) - rank(b));
}

async function deleteOwned(
  cluster: TargetCluster,
  refs: readonly ObjectRef[],
  ctx: TrackingContext,
  policy: 'foreground' | 'background',
  results: ResourceResult[],
  keep: { options: AppSyncOptions; approved: boolean },
): Promise<{ failures: string[]; remaining: number; skipped: number }> {
  const out = { failures: [] as string[], remaining: 0, skipped: 0 };
  const result = (ref: ObjectRef, status: string, httpStatus: number | null, message: string) =>
    results.push({
      verb: 'delete',
      group: groupOf(ref.apiVersion),
      kind: ref.kind,
      namespace: ref.namespace ?? null,
      name: ref.name,
      status,
      httpStatus,
      message,
    });
  const propagationPolicy = policy === 'foreground' ? 'Foreground' : 'Background';
  const going: ObjectRef[] = [];
  // Delete=false (the object's own sync-options, else the Application's) keeps it; Delete=confirm
  // waits for the Application's deletion-approved annotation, as Argo CD does.
  const decide = (ref: ObjectRef) => (live: unknown) => {
    const mode = deleteMode(keep.options, parseResourceSyncOptions(live));
    if (mode === 'false') return { keep: 'left in place: Delete=false' };
    if (mode === 'confirm' && !keep.approved)
      return {
        keep: `Waiting for deletion confirmation of ${ref.apiVersion}/${ref.kind}/${ref.name} (Delete=confirm): annotate the Application with argocd.argoproj.io/deletion-approved=<ISO time now>`,
      };
    return 'delete' as const;
  };
  for (const ref of refs) {
    try {
      const r = await deleteIfOwned(cluster, ref, ctx, {
        dryRun: false,
        propagationPolicy,
        decide: decide(ref),
      });
      if (r.outcome === 'deleted') {
        going.push(ref);
        result(ref, 'Deleted', 200, `${describeRef(ref)} deleted as ${cluster.identityName} (${policy})`);
      } else if (r.outcome === 'terminating') going.push(ref);
      else if (r.outcome === 'kept') {
        result(ref, 'DeleteSkipped', null, `${describeRef(ref)} ${r.reason}`);
        if (r.reason.startsWith('Waiting')) out.failures.push(r.reason);
        else out.skipped++;
      } else if (r.outcome === 'not-owned') {
        out.skipped++;
        result(
          ref,
          'DeleteSkipped',
          null,
          `${describeRef(ref)} left in place: ${r.owner ? `its tracking id names application ${r.owner}` : 'it carries no tracking id of this application'}`,
        );
      }
    } catch (err) {
      if (isUnreachable(err)) throw err;
      const status = httpStatusOf(err);
      const message =
        status === 403
          ? `${cluster.identityName} may not delete ${describeRef(ref)}: ${kubeMessageOf(err)}`
          : `delete of ${describeRef(ref)} as ${cluster.identityName} failed${status ? ` (HTTP ${status})` : ''}: ${kubeMessageOf(err)}`;
      result(ref, 'DeleteFailed', status ?? null, message);
      out.failures.push(message);
    }
  }
  // Deleted with background propagation, most objects are gone at once: look again before waiting.
  if (out.failures.length === 0)
    for (const ref of going)
      if ((await cluster.read(ref).catch(() => 'unreadable')) !== undefined) out.remaining++;
  return out;
}
