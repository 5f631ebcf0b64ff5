// Automation's I/O around the pure decision (automation.ts): what the operations say about the last
// sync, and the queued operation itself — in the same durable queue as every sync, marked with its
// trigger (automated or self-heal, actor `automation`), at the revision the verdict was reached at.
// A self-heal that is not due yet is looked at again when it is.
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import type { Logger } from '@capstan/service';
import type { SyncDb } from '../sync.table.js';
import { enqueueOperation } from '../operations/operations.repository.js';
import type { DesiredState } from './desired.js';
import type { Verdict } from './verdict.js';
import { automatedOperationId, decideAutomation, type SelfHealPolicy } from './automation.js';
import { lastSyncOf } from './last-sync.repository.js';

export class Automation {
  /** The verdict automation last looked at per Application: the same verdict is not looked at twice. */
  private readonly checked = new Map<string, string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** The last refusal per Application, logged once. */
  private readonly refusals = new Map<string, string>();

  constructor(
    private readonly deps: { db: SyncDb; logger: Logger; wake(count?: number): void },
    private readonly selfHeal: SelfHealPolicy,
    private readonly again: (app: string) => void,
  ) {}

  forgetChecked(app: string): void {
    this.checked.delete(app);
  }

  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  async consider(
    key: string,
    app: { namespace: string; name: string },
    desired: DesiredState,
    verdict: Verdict,
    fingerprint: string,
  ): Promise<void> {
    const automated = desired.application.spec.syncPolicy?.automated;
    if (!automated || automated.enabled === false) return;
    if (this.checked.get(key) === fingerprint) return;
    this.checked.set(key, fingerprint);
    try {
      const { inFlight, last } = await lastSyncOf(this.deps.db, app);
      const decision = decideAutomation({
        app: desired.application,
        verdict,
        specHash: desired.specHash,
        inFlight,
        lastSync: last,
        now: new Date(),
        selfHeal: this.selfHeal,
      });
      const log = this.deps.logger.child({ application: key });
      if (decision.action === 'wait') {
        this.later(key, decision.inMs);
        return;
      }
      if (decision.action === 'refuse') {
        if (this.refusals.get(key) !== decision.message)
          log.warn({ reason: decision.message }, 'automated sync refused');
        this.refusals.set(key, decision.message);
        return;
      }
      // In flight: looked at again when it finishes (syncFinished), or by the next resync elsewhere.
      if (decision.action === 'none') {
        if (inFlight) this.checked.delete(key);
        return;
      }
      const operationId = automatedOperationId(app, decision, desired.specHash, last);
      const trigger = { kind: decision.trigger, actor: 'automation' };
      const queued = await enqueueOperation(this.deps.db, {
        operationId,
        appNamespace: app.namespace ?? DEFAULT_CONTROL_NAMESPACE,
        appName: app.name,
        request: {
          operationId,
          application: app,
          ...(decision.revisions
            ? { revisions: decision.revisions }
            : decision.revision
              ? { revision: decision.revision }
              : {}),
          dryRun: false,
          prune: decision.prune,
          automated: true,
          trigger,
          specHash: desired.specHash,
          selfHealAttempts: decision.selfHealAttempts,
        },
        triggerEventId: operationId,
        actor: 'automation',
        correlationId: null,
      });
      if (queued) {
        log.info(
          { operationId, trigger: decision.trigger, revision: decision.revision },
          `Initiated automated sync to '${decision.revision ?? ''}'`,
        );
        this.deps.wake();
      }
    } catch (err) {
      this.checked.delete(key);
      this.deps.logger.error({ err, application: key }, 'automated sync decision failed');
    }
  }

  private later(key: string, inMs: number): void {
    clearTimeout(this.timers.get(key));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.checked.delete(key);
        this.again(key);
      }, inMs),
    );
  }
}
