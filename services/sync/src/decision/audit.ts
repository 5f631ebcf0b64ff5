// What the audit trail keeps of a decision (audit.sync_decisions) and of each resource operation
// (audit.resource_results). Rows are appended, never updated; no secret is ever part of them.
import type { AuditWork, AuditWriter } from './audit-writer.js';
import type { SyncDecision } from '@capstan/policy';

export interface DecisionContext {
  syncId: string;
  application: { namespace: string; name: string };
  revision: string | null;
  triggerEventId: string;
  actor: string;
  impersonation: boolean;
  strict: boolean;
  /** The operation's attempt that decided (a retry decides again). */
  attempt: number;
}

/** Appends the decision row, committed together with `work` (the sync's started event). */
export async function recordDecision<R>(
  audit: AuditWriter,
  ctx: DecisionContext,
  decision: SyncDecision | { allowed: false; reason: string },
  work: AuditWork<R>,
): Promise<R> {
  const full = 'rules' in decision ? decision : undefined;
  return audit.append(
    'sync_decisions',
    [
      {
        sync_id: ctx.syncId,
        application: `${ctx.application.namespace}/${ctx.application.name}`,
        project: full?.project ?? '',
        project_chain: full ? [...full.projectChain] : [],
        destination_server: full?.destination.server ?? null,
        destination_namespace: full?.destination.namespace ?? null,
        impersonation: ctx.impersonation,
        strict_mode: ctx.strict,
        rules_considered: (full?.rules ?? []).map((r) => ({
          index: r.index,
          server: r.server,
          namespace: r.namespace,
          defaultServiceAccount: r.defaultServiceAccount,
          matched: r.serverMatched && r.namespaceMatched,
          project: r.project,
        })),
        matched_rule_index: full?.matchedRule ?? null,
        matched_rule_pattern: full?.matchedPattern
          ? `${full.matchedPattern.server}/${full.matchedPattern.namespace}`
          : null,
        service_account: full?.serviceAccount
          ? `${full.serviceAccount.namespace}/${full.serviceAccount.name}`
          : null,
        username: full?.username ?? null,
        fallback: full?.fallback ?? null,
        decision: decision.allowed ? 'allow' : 'deny',
        reason: decision.reason,
        revision: ctx.revision,
        trigger_event_id: ctx.triggerEventId,
        actor: ctx.actor,
        attempt: ctx.attempt,
      },
    ],
    work,
  );
}

/** Where results go: the operation, its Application, the identity and the attempt that wrote them. */
export interface ResultContext {
  syncId: string;
  application: { namespace: string; name: string };
  identity: string;
  /** An attempt that died has written results its retry writes again: every row says which. */
  attempt: number;
}

export interface ResourceResult {
  verb: string;
  group: string;
  kind: string;
  namespace: string | null;
  name: string;
  status: string;
  httpStatus: number | null;
  message: string;
  /** Who wrote it, when not the sync's identity (control-plane objects: the delivering Application, through the api). */
  identity?: string;
}

/**
 * Appends the results of one step (a wave, a prune) in one transaction, in order; with `work` (the
 * operation's terminal state and events), in the same transaction as that.
 */
export async function recordResourceResults(
  audit: AuditWriter,
  ctx: ResultContext,
  results: readonly ResourceResult[],
): Promise<void>;
export async function recordResourceResults<R>(
  audit: AuditWriter,
  ctx: ResultContext,
  results: readonly ResourceResult[],
  work: AuditWork<R>,
): Promise<R>;
export async function recordResourceResults<R>(
  audit: AuditWriter,
  ctx: ResultContext,
  results: readonly ResourceResult[],
  work?: AuditWork<R>,
): Promise<R | void> {
  const rows = results.map((r) => ({
    sync_id: ctx.syncId,
    application: `${ctx.application.namespace}/${ctx.application.name}`,
    verb: r.verb,
    api_group: r.group,
    kind: r.kind,
    namespace: r.namespace,
    name: r.name,
    identity: r.identity ?? ctx.identity,
    http_status: r.httpStatus,
    message: r.message.slice(0, 2000),
    attempt: ctx.attempt,
  }));
  return work ? audit.append('resource_results', rows, work) : audit.append('resource_results', rows);
}
