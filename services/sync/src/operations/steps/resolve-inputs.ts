// Step 1 of a sync attempt: read what it decides from (the Application, projects, clusters, what it
// applied last), stop a retry whose Application changed, render and decide (decision/decide.ts),
// and put the decision on record with the attempt's sync.started before anything touches a cluster.
import { newEvent, syncImpersonationIgnored } from '@capstan/events';
import type { SyncTrx } from '../../sync.table.js';
import { decideSync, type Decided } from '../../decision/decide.js';
import { recordDecision } from '../../decision/audit.js';
import { loadSyncInputs, type SyncInputs } from '../../decision/sync-inputs.repository.js';
import { appendOperationEvents } from '../operations.repository.js';
import { StepFailed, type SyncAttempt } from '../sync-attempt.js';

export interface Resolved {
  inputs: SyncInputs;
  decided: Decided;
}

export async function resolveInputs(a: SyncAttempt): Promise<Resolved | StepFailed> {
  const { deps, op, request, app } = a;
  const inputs = await loadSyncInputs(deps.db, app);
  a.rawApplication = inputs.application;
  const stopped = a.retryStopped(inputs.application);
  if (stopped) return new StepFailed('decision', stopped, true);
  const decided = await decideSync(inputs, request, deps.manifests, deps.settings);
  a.application = decided.application;
  a.lap('decideMs');
  const revision = 'decision' in decided ? decided.rendered.revision : (request.revision ?? null);
  const auditCtx = {
    syncId: op.operationId,
    attempt: op.attempt,
    application: app,
    revision,
    triggerEventId: op.triggerEventId,
    actor: op.actor,
    impersonation: deps.settings.impersonation,
    strict: deps.settings.strict,
  };
  // The decision is on record before anything touches the cluster, whatever it is; the started
  // event commits with it.
  const started = a.startedEvent(revision, 'decision' in decided ? decided.rendered.revisions : undefined);
  a.startedRecorded(
    await recordDecision<number | undefined>(
      deps.audit,
      auditCtx,
      'decision' in decided ? decided.decision : decided,
      (trx) => appendOperationEvents(trx as SyncTrx, op.operationId, [started], a.streamVersion),
    ),
  );
  a.lap('auditMs');
  if (!('decision' in decided)) return new StepFailed('decision', decided.reason);
  warnIgnoredServiceAccounts(a, decided);
  if (!decided.decision.allowed) return new StepFailed('decision', decided.decision.reason);
  return { inputs, decided };
}

/** With impersonation off, every destinationServiceAccounts rule of the chain is ignored: say so. */
function warnIgnoredServiceAccounts(a: SyncAttempt, decided: Decided): void {
  const { decision } = decided;
  if (decision.impersonation || decision.rules.length === 0) return;
  const projects = decision.rules.reduce<Record<string, number>>(
    (acc, r) => ({ ...acc, [r.project]: (acc[r.project] ?? 0) + 1 }),
    {},
  );
  a.log.warn(
    { projects },
    'impersonation is off: destinationServiceAccounts are ignored, syncing with the cluster credentials',
  );
  a.events.push(
    newEvent(
      syncImpersonationIgnored.type,
      {
        operationId: a.op.operationId,
        application: a.app,
        projects: Object.entries(projects).map(([name, rules]) => ({ name, rules })),
      },
      a.meta,
    ),
  );
}
