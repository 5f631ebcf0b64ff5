// Every RBAC decision of the api is recorded in audit.access_decisions with the policy line that
// decided. Denials and decisions about writes are recorded before the caller gets an answer;
// allowed reads are recorded in batches shortly after (so that reads stay fast), and flushed on
// shutdown.
import type { Kysely } from 'kysely';
import { appendAudit, appendAuditBatch, type AuditRow } from '@capstan/db';
import { PermissionDeniedError, UnavailableError } from '@capstan/service';
import type { Decision } from '@capstan/rbac';
import { ADMIN_ROLE } from '@capstan/rbac';
import type { Logger } from '@capstan/service';
import type { PolicyStore } from './policy-store.js';
import { actorOf, type Principal } from '../auth/principal.js';
import { decideForDeliverer } from '../delivery/deliverer-rights.js';

export type Via = 'grpc' | 'http' | 'internal' | 'bus';

const READ_ACTIONS = new Set(['get', 'list']);
const MAX_PENDING = 50_000;
/** Allowed reads are written this long after the first of a batch (or at 500 rows). */
const FLUSH_DELAY_MS = 100;

function lineText(d: Decision): string | null {
  return d.line ? `${d.line.source}:${d.line.line}: ${d.line.text}` : null;
}

export class Authorizer {
  private pending: AuditRow<'access_decisions'>[] = [];
  private flushing: Promise<void> | undefined;
  /** Armed while reads wait to be recorded, never when there are none. */
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly db: Kysely<unknown>,
    private readonly policy: PolicyStore,
    private readonly logger: Logger,
  ) {}

  isAdmin(p: Principal): boolean {
    return (
      p.kind === 'user' &&
      !p.deliverer &&
      this.policy.current.hasRole({ name: p.name, groups: p.groups }, ADMIN_ROLE)
    );
  }

  /**
   * The decision without recording it (for filtering lists; the list itself is recorded). An
   * Application delivering from git is decided by its project's grants, never by policy lines.
   */
  decide(p: Principal, resource: string, action: string, object: string): Decision {
    if (p.deliverer) return decideForDeliverer(p.deliverer, resource, action, object);
    // Argo CD's anonymous user has the default role's rights only: no line names it (an account
    // could never be called `anonymous` anyway, see accounts.service).
    if (p.anonymous) return this.policy.current.enforce({ name: '', groups: [] }, resource, action, object);
    return this.policy.current.enforce({ name: p.name, groups: p.groups }, resource, action, object);
  }

  /** Authorises and records; throws PermissionDeniedError when denied. */
  async check(p: Principal, resource: string, action: string, object: string, via: Via): Promise<Decision> {
    const d = this.decide(p, resource, action, object);
    await this.record(p, resource, action, object, via, d);
    if (!d.allowed) {
      throw new PermissionDeniedError(`permission denied: ${resource}, ${action}, ${object} (${p.name})`);
    }
    return d;
  }

  /**
   * Records many decisions in one statement before the caller gets an answer (an ApplicationSet's
   * verdicts, one row per generated Application).
   */
  async recordAll(
    p: Principal,
    via: Via,
    entries: readonly { resource: string; action: string; object: string; decision: Decision }[],
  ): Promise<void> {
    if (entries.length === 0) return;
    await appendAuditBatch(
      this.db,
      'access_decisions',
      entries.map((e) => this.row(p, e.resource, e.action, e.object, via, e.decision)),
    );
  }

  private row(
    p: Principal | { name: string },
    resource: string,
    action: string,
    object: string,
    via: Via,
    d: Decision,
  ): AuditRow<'access_decisions'> {
    return {
      subject: 'kind' in p ? actorOf(p as Principal) : p.name,
      resource,
      action,
      object,
      decision: d.allowed ? 'allow' : 'deny',
      policy_line: lineText(d),
      reason: d.reason,
      via,
    };
  }

  /** Records a decision made elsewhere (authentication failures, service checks, list summaries). */
  async record(
    p: Principal | { name: string },
    resource: string,
    action: string,
    object: string,
    via: Via,
    d: Decision,
  ): Promise<void> {
    const row = this.row(p, resource, action, object, via, d);
    if (d.allowed && READ_ACTIONS.has(action)) {
      // Reads are answered only while their decisions can still be recorded: when the audit trail
      // has been unwritable for long, refuse rather than serve unaudited.
      if (this.pending.length >= MAX_PENDING)
        throw new UnavailableError('the audit trail cannot be written; try again later');
      this.pending.push(row);
      if (this.pending.length >= 500) void this.flush();
      else this.flushSoon();
      return;
    }
    await appendAudit(this.db, 'access_decisions', row);
  }

  private flushSoon(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, FLUSH_DELAY_MS);
    this.timer.unref();
  }

  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.flushing) return this.flushing;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.flushing = (async () => {
      try {
        await appendAuditBatch(this.db, 'access_decisions', batch);
      } catch (err) {
        this.logger.error({ err, rows: batch.length }, 'could not record access decisions; will retry');
        this.pending.unshift(...batch);
      } finally {
        this.flushing = undefined;
        // Rows that came (or came back) while this batch was written wait for the next one.
        if (this.pending.length > 0) this.flushSoon();
      }
    })();
    return this.flushing;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.flush();
    if (this.pending.length > 0) await this.flush();
  }
}
