// The state of one attempt of one sync operation and the ways it ends: what it recorded (resource
// results for the audit trail, events for the operation's stream), and exactly one of succeed,
// fail (terminal, or scheduled again by syncPolicy.retry) or requeue (unreachable cluster). The
// steps of an attempt (steps/*.ts) fill it in; sync-runner.ts runs them in order.
import { canonicalDigest, type Application } from '@capstan/policy';
import {
  applicationSubject,
  newEvent,
  syncFailed,
  syncResourceSynced,
  syncStarted,
  type Envelope,
} from '@capstan/events';
import type { Logger } from '@capstan/service';
import type { SyncTrx } from '../sync.table.js';
import type { SyncRequestData } from '../decision/decide.js';
import { recordResourceResults, type ResourceResult, type ResultContext } from '../decision/audit.js';
import type { AuditWork } from '../decision/audit-writer.js';
import { isUnreachable } from '../kube/kube-errors.js';
import {
  appendOperationEvents,
  finishOperationIn,
  requeueOperation,
  scheduleRetry,
  type ClaimedOperation,
} from './operations.repository.js';
import { nextRetry, retryPolicyOf, RetryPolicyError } from './retry.js';
import { triggerOf, type SyncTrigger } from './trigger.js';
import type { SyncRunnerDeps } from './sync-runner.js';

export type Phase = 'decision' | 'apply' | 'hook' | 'prune' | 'infrastructure';
export type Outcome = 'succeeded' | 'failed' | 'requeued' | 'lost';
export type Identity = { impersonation: boolean; username: string | null };

/** A step that cannot go on: the attempt fails in `phase` (`final`: not retried by syncPolicy.retry). */
export class StepFailed {
  constructor(
    readonly phase: Phase,
    readonly reason: string,
    readonly final = false,
  ) {}
}

/** The Application as a retry compares it: a retry stops when its spec changed. */
export function applicationFingerprint(application: unknown): string {
  return canonicalDigest((application as { spec?: unknown } | undefined)?.spec ?? null, 'application-spec');
}

export class SyncAttempt {
  readonly request: SyncRequestData & { trigger?: SyncTrigger };
  readonly app: { namespace: string; name: string };
  readonly trigger: SyncTrigger;
  readonly log: Logger;
  readonly meta: Parameters<typeof newEvent>[2];
  /** Events of this attempt not yet committed (the started event goes with the decision row). */
  readonly events: Envelope[] = [];
  /** Who the attempt writes as, once decided. */
  identity: Identity | null = null;
  /** The Application as read (raw) and decoded, once loaded. */
  rawApplication: unknown;
  application: Application | undefined;
  /** Where resource results go in the audit trail, once the cluster identity is known. */
  private auditRef: ResultContext | undefined;
  /** Results recorded but not yet in the audit trail. */
  private pending: ResourceResult[] = [];
  private started: Envelope | undefined;
  private startedOnRecord = false;
  /** The operation stream's version: 0 before the first attempt, read from the stream on later ones. */
  streamVersion: number | undefined;
  readonly timings: Record<string, number> = {};
  readonly startedAt = performance.now();
  private mark = this.startedAt;

  constructor(
    readonly deps: SyncRunnerDeps,
    readonly op: ClaimedOperation,
  ) {
    this.request = op.request as SyncRequestData & { trigger?: SyncTrigger };
    this.app = this.request.application;
    this.trigger = triggerOf(this.request, op);
    this.meta = {
      subject: applicationSubject(this.app.namespace, this.app.name),
      actor: op.actor,
      source: 'capstan/sync',
      causationId: op.triggerEventId,
      ...(op.correlationId ? { correlationId: op.correlationId } : {}),
    };
    this.streamVersion = op.attempt === 1 ? 0 : undefined;
    this.log = deps.logger.child({
      operationId: op.operationId,
      application: `${this.app.namespace}/${this.app.name}`,
      attempt: op.attempt,
    });
  }

  /** Where the time of a sync goes, in the success log line. */
  lap(name: string): void {
    const now = performance.now();
    this.timings[name] = Math.round((now - this.mark) * 10) / 10;
    this.mark = now;
  }

  /** sync.started of this attempt: its trigger, and the revision when known. */
  startedEvent(revision?: string | null, revisions?: readonly string[]): Envelope {
    const rev = revision ?? this.request.revision;
    const revs = revisions ?? this.request.revisions;
    this.started ??= newEvent(
      syncStarted.type,
      {
        operationId: this.op.operationId,
        application: this.app,
        dryRun: this.request.dryRun,
        attempt: this.op.attempt,
        trigger: this.trigger,
        ...(rev ? { revision: rev } : {}),
        ...(revs && revs.length > 0 ? { revisions: [...revs] } : {}),
      },
      this.meta,
    );
    return this.started;
  }

  /** The started event went on record (with the decision row) at this stream version. */
  startedRecorded(version: number | undefined): void {
    this.streamVersion = version;
    this.startedOnRecord = true;
  }

  private unsent(): Envelope[] {
    return this.startedOnRecord ? this.events : [this.startedEvent(), ...this.events];
  }

  setAuditIdentity(identityName: string): void {
    this.auditRef = {
      syncId: this.op.operationId,
      application: this.app,
      identity: identityName,
      attempt: this.op.attempt,
    };
  }

  /** One resource operation: an audit row (written before the next step) and a resource-synced event. */
  readonly record = (r: ResourceResult): void => {
    this.pending.push(r);
    this.events.push(
      newEvent(
        syncResourceSynced.type,
        {
          operationId: this.op.operationId,
          application: this.app,
          attempt: this.op.attempt,
          ...r,
          identity: r.identity
            ? { impersonation: false, username: r.identity }
            : (this.identity ?? { impersonation: false, username: null }),
        },
        this.meta,
      ),
    );
  };

  /** The results recorded so far go to the audit trail (before the next step touches the cluster). */
  readonly flush = async (): Promise<void> => {
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0 && this.auditRef) await recordResourceResults(this.deps.audit, this.auditRef, batch);
  };

  /** `work` and the results not yet on record, in one group-committed transaction. */
  commitWithPending<R>(work: AuditWork<R>): Promise<R> {
    const batch = this.pending;
    this.pending = [];
    return this.auditRef
      ? recordResourceResults(this.deps.audit, this.auditRef, batch, work)
      : this.deps.audit.append('resource_results', [], work);
  }

  /**
   * The results not yet on record, the operation's terminal state and this attempt's events, in one
   * transaction; false when the operation is not ours any more (the results are recorded all the same).
   */
  finish(
    status: 'succeeded' | 'failed',
    reason: string,
    inTransaction?: (trx: SyncTrx) => Promise<void>,
  ): Promise<boolean> {
    return this.commitWithPending((trx) =>
      finishOperationIn(
        trx as SyncTrx,
        this.op,
        status,
        reason,
        this.unsent(),
        this.streamVersion,
        inTransaction,
      ),
    );
  }

  /**
   * The attempt failed: retried after a backoff when the Application's syncPolicy.retry allows
   * another (Argo CD retries every failed or errored operation), terminal otherwise.
   */
  async fail(phase: Phase, reason: string, final = false): Promise<Outcome> {
    const retry = final ? undefined : this.retryDue();
    if (retry && 'delayMs' in retry) {
      const n = this.op.retries + 1;
      const message = `${reason}. Retrying attempt #${n} in ${Math.round(retry.delayMs / 100) / 10}s.`;
      this.log.warn({ phase, reason, retry: n, delayMs: retry.delayMs }, 'sync failed; retrying');
      await this.commitWithPending(async (trx) => {
        if (await scheduleRetry(trx as SyncTrx, this.op, retry.delayMs, message, retry.fingerprint))
          await appendOperationEvents(trx as SyncTrx, this.op.operationId, this.unsent(), this.streamVersion);
      });
      return 'requeued';
    }
    const final_ =
      retry && 'error' in retry
        ? `${reason} (failed to retry: ${retry.error})`
        : this.op.retries > 0
          ? `${reason} (retried ${this.op.retries} times).`
          : reason;
    this.log.warn({ phase, reason: final_ }, 'sync failed');
    this.events.push(
      newEvent(
        syncFailed.type,
        {
          operationId: this.op.operationId,
          application: this.app,
          phase,
          reason: final_,
          identity: this.identity,
        },
        this.meta,
      ),
    );
    // What this attempt did goes on record whatever happens next (even if the operation is no
    // longer ours: our lease expired and another runner took over, so the terminal event is theirs).
    return (await this.finish('failed', final_)) ? 'failed' : 'lost';
  }

  /** Whether syncPolicy.retry schedules another attempt, and when. */
  private retryDue(): { delayMs: number; fingerprint: string } | { error: string } | undefined {
    const app = this.application;
    // Nothing to retry for: gone, being deleted, or a preview.
    if (!app || this.request.dryRun || this.request.cascadeDelete) return undefined;
    if ((app.metadata as { deletionTimestamp?: unknown }).deletionTimestamp) return undefined;
    try {
      const policy = retryPolicyOf(app.spec.syncPolicy);
      const next = policy && nextRetry(policy, this.op.retries);
      return next
        ? { delayMs: next.delayMs, fingerprint: applicationFingerprint(this.rawApplication) }
        : undefined;
    } catch (err) {
      if (err instanceof RetryPolicyError) return { error: err.message };
      throw err;
    }
  }

  /**
   * A retry whose Application is gone, being deleted or changed since the failed attempt stops
   * here (a changed Application gets a sync of its own); the reason, or undefined to go on.
   */
  retryStopped(raw: unknown): string | undefined {
    if (this.op.retries === 0) return undefined;
    const { namespace, name } = this.app;
    if (raw === undefined) return `retry stopped: Application ${namespace}/${name} was deleted`;
    if ((raw as { metadata?: { deletionTimestamp?: unknown } }).metadata?.deletionTimestamp)
      return `retry stopped: Application ${namespace}/${name} is being deleted`;
    if (this.op.appFingerprint !== null && applicationFingerprint(raw) !== this.op.appFingerprint)
      return `retry stopped: Application ${namespace}/${name} changed since the failed attempt`;
    return undefined;
  }

  /**
   * An error no step handled: an unreachable cluster puts the operation back in the queue with
   * backoff (sync.max-attempts, counted from the last policy retry); anything else fails the attempt.
   */
  async handleError(err: unknown): Promise<Outcome> {
    const tries = this.op.attempt - this.op.retryBase;
    if (isUnreachable(err) && tries < this.deps.settings.maxAttempts) {
      const delayMs = Math.min(60_000, 1_000 * 2 ** (tries - 1));
      this.log.warn({ err: (err as Error).message, delayMs }, 'target unreachable: sync requeued');
      await this.commitWithPending(async (trx) => {
        const ours = await requeueOperation(
          trx as SyncTrx,
          this.op,
          delayMs,
          `unreachable: ${(err as Error).message}`,
        );
        if (ours && !this.startedOnRecord)
          await appendOperationEvents(
            trx as SyncTrx,
            this.op.operationId,
            [this.startedEvent()],
            this.streamVersion,
          );
      });
      return 'requeued';
    }
    const message = err instanceof Error ? err.message : String(err);
    return this.fail(
      'infrastructure',
      isUnreachable(err) ? `target cluster unreachable after ${tries} attempts: ${message}` : message,
    );
  }
}
