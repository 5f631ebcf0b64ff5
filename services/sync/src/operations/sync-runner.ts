// One attempt of one sync operation, start to terminal: decide (and record the decision before
// touching the cluster), connect as the decided identity, discover, check each object against the
// project chain, execute the plan, and finish with exactly one terminal event. A target cluster
// that cannot be reached puts the operation back in the queue with backoff instead.
import {
  newEvent,
  syncFailed,
  syncImpersonationIgnored,
  syncResourceSynced,
  syncStarted,
  syncSucceeded,
  type Envelope,
} from '@capstan/events';
import type { Logger } from '@capstan/service';
import type { SyncDb, SyncTrx } from '../sync.table.js';
import {
  checkResources,
  decideSync,
  type DecisionSettings,
  type SyncRequestData,
} from '../decision/decide.js';
import { recordDecision, recordResourceResults, type ResourceResult } from '../decision/audit.js';
import type { AuditWork, AuditWriter } from '../decision/audit-writer.js';
import type { ManifestSource } from '../manifests/manifest-source.js';
import type { ClusterCredentialsSource } from '../kube/cluster-credentials.js';
import { ImpersonationError, isUnreachable, type SyncIdentity } from '../kube/target-cluster.js';
import type { TargetClusterPool } from '../kube/target-cluster-pool.js';
import { planSync, PlanError, refKey, type ObjectRef } from '../apply/plan.js';
import { executePlan } from '../apply/execute.js';
import type { HealthAssessor } from '@capstan/health';
import { syncTracking } from '../apply/ownership.js';
import { preflight, pruneCandidates } from '../apply/preflight.js';
import { replaceApplied } from '../apply/applied-resources.repository.js';
import { loadSyncInputs } from '../decision/sync-inputs.repository.js';
import { discover, managedNamespace } from '../apply/discover.js';
import {
  controlPlaneResources,
  isControlPlaneRef,
  partitionObjects,
  refOf,
} from '../delivery/control-plane-objects.js';
import { deliverControlPlane } from '../delivery/deliver.js';
import type { DeliveredObjects } from '../delivery/api-delivery.js';
import {
  appendOperationEvents,
  finishOperationIn,
  requeueOperation,
  type ClaimedOperation,
} from './operations.repository.js';

export interface SyncRunnerDeps {
  db: SyncDb;
  credentials: ClusterCredentialsSource;
  manifests: ManifestSource;
  settings: DecisionSettings & { hookTimeoutMs: number; waveTimeoutMs?: number; maxAttempts: number };
  /** Health of live objects: sync waves and hooks wait on it (apply/health-wait.ts). */
  health?: HealthAssessor;
  logger: Logger;
  clusters: TargetClusterPool;
  /** Group-committed audit appends. */
  audit: AuditWriter;
  /** Where control-plane objects (argoproj.io AppProject, Application) go: the api. */
  delivery: DeliveredObjects;
}

type Phase = 'decision' | 'apply' | 'hook' | 'prune' | 'infrastructure';

export async function runOperation(
  deps: SyncRunnerDeps,
  op: ClaimedOperation,
): Promise<'succeeded' | 'failed' | 'requeued' | 'lost'> {
  const request = op.request as SyncRequestData;
  const app = request.application;
  const meta = {
    subject: `applications/${app.namespace}/${app.name}`,
    actor: op.actor,
    source: 'capstan/sync',
    causationId: op.triggerEventId,
    ...(op.correlationId ? { correlationId: op.correlationId } : {}),
  };
  // Events of this attempt not yet committed: `sync.started` goes with the decision row, the rest
  // with the terminal state.
  const events: Envelope[] = [];
  const startedEvent: Envelope = newEvent(
    syncStarted.type,
    { operationId: op.operationId, application: app, dryRun: request.dryRun, attempt: op.attempt },
    meta,
  );
  let startedOnRecord = false;
  const unsent = () => (startedOnRecord ? events : [startedEvent, ...events]);
  // The operation stream's version: empty before the first attempt; read from the stream on later
  // ones (an earlier attempt may have appended its started event or not).
  let streamVersion: number | undefined = op.attempt === 1 ? 0 : undefined;
  let identity: { impersonation: boolean; username: string | null } | null = null;
  const log = deps.logger.child({
    operationId: op.operationId,
    application: `${app.namespace}/${app.name}`,
    attempt: op.attempt,
  });

  // Resource results recorded but not yet in the audit trail; written before the next step touches
  // the cluster, and at the latest just before the terminal event.
  let pending: ResourceResult[] = [];
  let auditRef:
    { syncId: string; application: { namespace: string; name: string }; identity: string } | undefined;
  const writePending = async () => {
    const batch = pending;
    pending = [];
    if (batch.length > 0 && auditRef) await recordResourceResults(deps.audit, auditRef, batch);
  };
  /** `work` and the results not yet on record, in one group-committed transaction. */
  const commitWithPending = <R>(work: AuditWork<R>): Promise<R> => {
    const batch = pending;
    pending = [];
    return auditRef
      ? recordResourceResults(deps.audit, auditRef, batch, work)
      : deps.audit.append('resource_results', [], work);
  };

  /**
   * The results not yet on record, the operation's terminal state and this attempt's events, in one
   * transaction (group-committed with other syncs'); false when the operation is not ours any more
   * (the results are recorded all the same).
   */
  const finish = (
    status: 'succeeded' | 'failed',
    reason: string,
    inTransaction?: (trx: SyncTrx) => Promise<void>,
  ): Promise<boolean> =>
    commitWithPending((trx) =>
      finishOperationIn(trx as SyncTrx, op, status, reason, unsent(), streamVersion, inTransaction),
    );

  const fail = async (phase: Phase, reason: string) => {
    log.warn({ phase, reason }, 'sync failed');
    events.push(
      newEvent(
        syncFailed.type,
        { operationId: op.operationId, application: app, phase, reason, identity },
        meta,
      ),
    );
    // What this attempt did goes on record whatever happens next (even if the operation is no
    // longer ours: our lease expired and another runner took over, so the terminal event is theirs).
    return (await finish('failed', reason)) ? 'failed' : 'lost';
  };

  try {
    // Where the time of a sync goes, in the success log line.
    const started = performance.now();
    const timings: Record<string, number> = {};
    let mark = started;
    const lap = (name: string) => {
      const now = performance.now();
      timings[name] = Math.round((now - mark) * 10) / 10;
      mark = now;
    };
    const inputs = await loadSyncInputs(deps.db, app);
    const decided = await decideSync(inputs, request, deps.manifests, deps.settings);
    lap('decideMs');
    const auditCtx = {
      syncId: op.operationId,
      application: app,
      revision: 'decision' in decided ? decided.rendered.revision : (request.revision ?? null),
      triggerEventId: op.triggerEventId,
      actor: op.actor,
      impersonation: deps.settings.impersonation,
      strict: deps.settings.strict,
    };
    // The decision is on record before anything touches the cluster, whatever it is; the started
    // event commits with it.
    streamVersion = await recordDecision<number | undefined>(
      deps.audit,
      auditCtx,
      'decision' in decided ? decided.decision : decided,
      (trx) => appendOperationEvents(trx as SyncTrx, op.operationId, [startedEvent], streamVersion),
    );
    startedOnRecord = true;
    lap('auditMs');
    if (!('decision' in decided)) return await fail('decision', decided.reason);
    const { decision, rendered } = decided;

    // With impersonation off, every destinationServiceAccounts rule of the chain is ignored.
    if (!decision.impersonation && decision.rules.length > 0) {
      const projects = decision.rules.reduce<Record<string, number>>(
        (acc, r) => ({ ...acc, [r.project]: (acc[r.project] ?? 0) + 1 }),
        {},
      );
      log.warn(
        { projects },
        'impersonation is off: destinationServiceAccounts are ignored, syncing with the cluster credentials',
      );
      events.push(
        newEvent(
          syncImpersonationIgnored.type,
          {
            operationId: op.operationId,
            application: app,
            projects: Object.entries(projects).map(([name, rules]) => ({ name, rules })),
          },
          meta,
        ),
      );
    }
    if (!decision.allowed) return await fail('decision', decision.reason);

    const syncIdentity: SyncIdentity = decision.impersonation
      ? { kind: 'service-account', username: decision.username ?? '' }
      : { kind: 'control-plane' };
    identity = { impersonation: decision.impersonation, username: decision.username };
    const server = decision.destination.server!;
    const clusterRef = decided.clusters.byServerUrl(server) ?? { name: server, server };
    const cluster = deps.clusters.get(await deps.credentials.get(clusterRef), syncIdentity);

    // Capstan's own objects go to the api; the rest are discovered on the cluster, as the sync identity.
    const destNamespace = decision.destination.namespace;
    const parts = partitionObjects(rendered.objects);
    const found = await discover(cluster, parts.cluster, { destNamespace, clusterName: clusterRef.name });
    const delivered = controlPlaneResources(parts.controlPlane, destNamespace);
    const problems = [...found.problems, ...delivered.problems];
    if (problems.length > 0) return await fail('decision', problems.join('; '));
    const { objects } = found;
    const resources = [...found.resources, ...delivered.resources];

    const syncPolicy = decided.application.spec.syncPolicy;
    const createNamespace = managedNamespace(syncPolicy, destNamespace, objects);
    if (createNamespace)
      resources.push({ group: '', kind: 'Namespace', namespaced: false, name: destNamespace });

    auditRef = { syncId: op.operationId, application: app, identity: cluster.identityName };
    const record = (r: ResourceResult) => {
      pending.push(r);
      events.push(
        newEvent(
          syncResourceSynced.type,
          {
            operationId: op.operationId,
            application: app,
            ...r,
            identity: r.identity ? { impersonation: false, username: r.identity } : identity!,
          },
          meta,
        ),
      );
    };
    const flush = () => writePending();
    const checked = checkResources(decided, resources);
    const denied = checked.checks.filter((c) => !c.allowed);
    if (denied.length > 0) {
      for (const c of denied) {
        record({
          verb: 'check',
          group: '',
          kind: '',
          namespace: null,
          name: '',
          status: 'Refused',
          httpStatus: null,
          message: c.reason,
        });
      }
      return await fail('decision', denied.map((c) => c.reason).join('; '));
    }

    let plan;
    try {
      plan = planSync(objects);
    } catch (err) {
      if (err instanceof PlanError) return await fail('decision', `invalid manifests: ${err.message}`);
      throw err;
    }
    const prune = request.prune || syncPolicy?.automated?.prune === true;
    const previouslyApplied = inputs.applied.get(server) ?? [];
    const stale = prune
      ? pruneCandidates(
          previouslyApplied.filter((r) => !isControlPlaneRef(r)),
          plan,
        )
      : [];
    lap('discoveryMs');
    const access = await preflight(
      cluster,
      {
        plan,
        createNamespace: createNamespace
          ? { apiVersion: 'v1', kind: 'Namespace', name: createNamespace.metadata.name }
          : undefined,
        pruneCandidates: stale,
      },
      record,
    );
    if (!access.ok) {
      return await fail('apply', access.reason);
    }
    lap('preflightMs');
    // Control-plane objects first: the api decides them all or nothing before the cluster is touched.
    let deliveredCounts = { delivered: 0, pruned: 0 };
    if (delivered.objects.length > 0 || (prune && previouslyApplied.some(isControlPlaneRef))) {
      const delivery = await deliverControlPlane(
        deps.delivery,
        {
          application: app,
          operationId: op.operationId,
          objects: delivered.objects,
          prune,
          dryRun: request.dryRun,
          cascadeDelete: request.cascadeDelete !== undefined,
        },
        record,
      );
      if (!delivery.ok) return await fail('apply', delivery.reason);
      deliveredCounts = delivery;
      await flush();
    }
    lap('deliverMs');
    const outcome = await executePlan(cluster, plan, {
      dryRun: request.dryRun,
      prune,
      pruneCandidates: stale,
      hookTimeoutMs: deps.settings.hookTimeoutMs,
      ...(deps.settings.waveTimeoutMs ? { waveTimeoutMs: deps.settings.waveTimeoutMs } : {}),
      ...(deps.health ? { health: deps.health } : {}),
      record,
      flush,
      ...(createNamespace ? { createNamespace } : {}),
      tracking: syncTracking(app, deps.settings.controlNamespace, destNamespace, syncPolicy?.syncOptions, {
        db: deps.db,
        server,
        previouslyApplied,
      }),
    });
    if (!outcome.ok) return await fail(outcome.phase, outcome.reason);

    events.push(
      newEvent(
        syncSucceeded.type,
        {
          operationId: op.operationId,
          application: app,
          revision: rendered.revision,
          dryRun: request.dryRun,
          identity,
          resources: outcome.applied + deliveredCounts.delivered,
          pruned: outcome.pruned + deliveredCounts.pruned,
        },
        meta,
      ),
    );
    lap('applyMs');
    // Control-plane objects no longer delivered stay on record until a sync prunes them (the api
    // is asked to prune only when this record says something was delivered).
    const deliveredNow = delivered.objects.map(refOf);
    const notPruned = prune
      ? []
      : previouslyApplied.filter(
          (r) => isControlPlaneRef(r) && !deliveredNow.some((d) => refKey(d) === refKey(r)),
        );
    const applied = [...plan.resources.map((o) => o.ref), ...deliveredNow, ...notPruned];
    const finished = await finish('succeeded', 'synced', async (trx) => {
      // Usually a sync applies what it applied last time: nothing to rewrite then.
      if (!request.dryRun && !sameRefs(previouslyApplied, applied))
        await replaceApplied(trx, app, server, applied);
    });
    lap('finishMs');
    log.info(
      {
        resources: outcome.applied + deliveredCounts.delivered,
        pruned: outcome.pruned + deliveredCounts.pruned,
        identity,
        timings,
        totalMs: Math.round(performance.now() - started),
      },
      'sync succeeded',
    );
    return finished ? 'succeeded' : 'lost';
  } catch (err) {
    if (err instanceof ImpersonationError) return fail('decision', err.message);
    if (isUnreachable(err) && op.attempt < deps.settings.maxAttempts) {
      const delayMs = Math.min(60_000, 1_000 * 2 ** (op.attempt - 1));
      log.warn({ err: (err as Error).message, delayMs }, 'target unreachable: sync requeued');
      await commitWithPending(async (trx) => {
        const ours = await requeueOperation(
          trx as SyncTrx,
          op,
          delayMs,
          `unreachable: ${(err as Error).message}`,
        );
        if (ours && !startedOnRecord)
          await appendOperationEvents(trx as SyncTrx, op.operationId, [startedEvent], streamVersion);
      });
      return 'requeued';
    }
    const message = err instanceof Error ? err.message : String(err);
    return fail(
      'infrastructure',
      isUnreachable(err) ? `target cluster unreachable after ${op.attempt} attempts: ${message}` : message,
    );
  }
}

function sameRefs(a: readonly ObjectRef[], b: readonly ObjectRef[]): boolean {
  if (a.length !== b.length) return false;
  const keys = new Set(a.map(refKey));
  return keys.size === a.length && b.every((r) => keys.has(refKey(r)));
}
