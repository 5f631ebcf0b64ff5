// Argo CD's automated sync, as its controller decides it (controller/appcontroller.go autoSync), as
// a pure function: only an OutOfSync Application with syncPolicy.automated (enabled not false), not
// being deleted and with no operation in flight, is synced; once per (revision, spec) — the last
// sync to the same revision and spec, whoever started it, counts — unless selfHeal is on, which
// re-syncs drift after Argo's backoff; a failed last attempt at the same revision is not retried
// (syncPolicy.retry does that); prune only when automated.prune; with prune and without allowEmpty, a
// sync that would prune every resource is refused with Argo's message.
import { createHash } from 'node:crypto';
import type { Application } from '@capstan/policy';
import type { Verdict } from './verdict.js';

/** The last finished sync of the Application (any trigger), as far as the operations record it. */
export interface LastSync {
  /** The revision synced: a multi-source Application's revisions joined (revisionKey). */
  revision: string | null;
  /** The spec the sync was started for, when it recorded one (automated syncs do). */
  specHash: string | null;
  succeeded: boolean;
  finishedAt: Date | null;
  /** Self-heal attempts counted up to and including that sync (0 for any other trigger). */
  selfHealAttempts: number;
  operationId: string;
}

/**
 * Argo CD's self-heal backoff (controller flags --self-heal-backoff-timeout-seconds 2, -factor 3,
 * -cap-seconds 300); with `backoffMs` 0, the fixed --self-heal-timeout-seconds.
 */
export interface SelfHealPolicy {
  backoffMs: number;
  factor: number;
  capMs: number;
  timeoutMs: number;
}

export const DEFAULT_SELF_HEAL: SelfHealPolicy = {
  backoffMs: 2_000,
  factor: 3,
  capMs: 300_000,
  timeoutMs: 5_000,
};

export interface AutomationInput {
  app: Application;
  verdict: Verdict;
  specHash: string;
  /** A sync of this Application is queued or running. */
  inFlight: boolean;
  lastSync: LastSync | undefined;
  now: Date;
  selfHeal: SelfHealPolicy;
}

export type AutomationDecision =
  | { action: 'none'; reason: string }
  /** Self-heal is due later: look again then. */
  | { action: 'wait'; inMs: number; reason: string }
  /** Argo's SyncError condition: nothing is synced, and the message says why. */
  | { action: 'refuse'; message: string }
  | {
      action: 'sync';
      trigger: 'automated' | 'self-heal';
      /** The verdict's revision (a multi-source Application's revisionKey). */
      revision: string | undefined;
      /** A multi-source Application's commit per source, pinned in the request. */
      revisions?: string[];
      prune: boolean;
      selfHealAttempts: number;
    };

/** The delay before self-heal attempt `attempts + 1` (Argo's selfHealRemainingBackoff, before subtracting the time since). */
export function selfHealDelayMs(policy: SelfHealPolicy, attempts: number): number {
  if (policy.backoffMs <= 0) return policy.timeoutMs;
  // wait.Backoff with Steps = attempts: the delay of the last step; 0 attempts: none.
  if (attempts <= 0) return 0;
  return Math.min(policy.capMs, policy.backoffMs * policy.factor ** (attempts - 1));
}

export function decideAutomation(input: AutomationInput): AutomationDecision {
  const { app, verdict } = input;
  const automated = app.spec.syncPolicy?.automated;
  if (!automated || automated.enabled === false) return { action: 'none', reason: 'automated sync is off' };
  if ((app.metadata as { deletionTimestamp?: unknown }).deletionTimestamp)
    return { action: 'none', reason: 'deletion in progress' };
  if (input.inFlight) return { action: 'none', reason: 'another operation is in progress' };
  if (verdict.sync.status !== 'OutOfSync')
    return { action: 'none', reason: `application status is ${verdict.sync.status}` };
  const prune = automated.prune === true;
  if (!prune && verdict.resources.every((r) => r.status === 'Synced' || r.requiresPruning === true))
    return {
      action: 'none',
      reason: 'need to prune extra resources only but automated prune is disabled',
    };
  const revision = revisionKey(verdict.sync);
  const last = input.lastSync;
  const alreadyAttempted =
    last !== undefined &&
    (last.revision === null || revision === undefined || last.revision === revision) &&
    (last.specHash === null || last.specHash === input.specHash);
  let selfHealAttempts = 0;
  let trigger: 'automated' | 'self-heal' = 'automated';
  if (alreadyAttempted) {
    if (!last.succeeded)
      return {
        action: 'refuse',
        message: `Failed last sync attempt to [${last.revision ?? ''}]: automated sync is not retried for the same revision`,
      };
    if (automated.selfHeal !== true)
      return { action: 'none', reason: `most recent sync already to [${revision ?? ''}]` };
    const delay = selfHealDelayMs(input.selfHeal, last.selfHealAttempts);
    const since = last.finishedAt ? input.now.getTime() - last.finishedAt.getTime() : 0;
    if (delay - since > 0)
      return {
        action: 'wait',
        inMs: delay - since,
        reason: `self-heal backoff (attempt ${last.selfHealAttempts + 1})`,
      };
    selfHealAttempts = last.selfHealAttempts + 1;
    trigger = 'self-heal';
  }
  if (prune && automated.allowEmpty !== true && verdict.resources.every((r) => r.requiresPruning === true))
    return {
      action: 'refuse',
      message: `Skipping sync attempt to [${revision ?? ''}]: auto-sync will wipe out all resources`,
    };
  const revisions = verdict.sync.revisions;
  return { action: 'sync', trigger, revision, ...(revisions ? { revisions } : {}), prune, selfHealAttempts };
}

/**
 * What automation compares "the same revision" by: the revision, or for a multi-source Application
 * every source's (a new commit of any source is a new revision to sync, as in Argo CD).
 */
export function revisionKey(r: {
  revision?: string | null | undefined;
  revisions?: readonly string[] | undefined;
}): string | undefined {
  if (r.revisions && r.revisions.length > 0) return r.revisions.join(',');
  return r.revision ?? undefined;
}

/** One operation per (revision, spec) — and per self-heal attempt — so a second replica or a restart queues nothing twice. */
export function automatedOperationId(
  app: { namespace: string; name: string },
  decision: Extract<AutomationDecision, { action: 'sync' }>,
  specHash: string,
  lastSync: LastSync | undefined,
): string {
  // Several sources' revisions are kept to one SHA-long digest: an operation id is at most 128 characters.
  const rev = decision.revisions
    ? createHash('sha256')
        .update(decision.revision ?? '')
        .digest('hex')
        .slice(0, 40)
    : (decision.revision ?? 'unresolved');
  const base = `${rev}:${specHash.slice(0, 12)}:${app.namespace}/${app.name}`;
  if (decision.trigger !== 'self-heal') return `auto:${base}`;
  // Self-heal follows one particular sync: the next one after it, whatever came before.
  const after = createHash('sha256')
    .update(lastSync?.operationId ?? '')
    .digest('hex')
    .slice(0, 12);
  return `heal:${after}:${base}`;
}
