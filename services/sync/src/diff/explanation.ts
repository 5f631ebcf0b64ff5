// SyncService.ExplainSync: who a sync of the Application started now would write as, and why —
// explainSync (@capstan/policy, the function `capstan sync explain` runs and every sync records)
// on what this service holds now, with its own settings (impersonation, strict), as the contract's
// SyncExplanation.
import type { SyncDecision } from '@capstan/policy';
import type { apiv1 } from '@capstan/proto';
import { NotFoundError } from '@capstan/service';
import { explainNow, type DecisionSettings, type EarlyRefusal } from '../decision/decide.js';
import { loadSyncInputs } from '../decision/sync-inputs.repository.js';
import type { SyncDb } from '../sync.table.js';

export async function explainApplication(
  deps: { db: SyncDb; settings: DecisionSettings },
  app: { namespace: string; name: string },
  now = new Date(),
): Promise<apiv1.SyncExplanation> {
  const decided = explainNow(await loadSyncInputs(deps.db, app), app, deps.settings);
  if ('checks' in decided) return explanationOf(decided, now);
  if (!decided.application) throw new NotFoundError(decided.reason);
  return refusalOf(decided, app, deps.settings, now);
}

export function explanationOf(d: SyncDecision, now: Date): apiv1.SyncExplanation {
  return {
    allowed: d.allowed,
    reason: d.reason,
    impersonation: d.impersonation,
    strict: d.strict,
    identity: d.identity ?? '',
    username: d.username ?? '',
    ...(d.serviceAccount ? { serviceAccount: { ...d.serviceAccount } } : {}),
    ...(d.matchedRule !== null ? { matchedRule: d.matchedRule } : {}),
    matchedProject: d.matchedProject ?? '',
    ...(d.matchedPattern ? { matchedPattern: { ...d.matchedPattern } } : {}),
    fallback: d.fallback ?? '',
    applicationNamespace: d.application.namespace,
    applicationName: d.application.name,
    project: d.project,
    projectChain: [...d.projectChain],
    destination: {
      server: d.destination.server ?? '',
      name: d.destination.name ?? '',
      namespace: d.destination.namespace,
      serviceAccountNamespace: d.destination.serviceAccountNamespace,
    },
    rules: d.rules.map((r) => ({ ...r, withheld: false })),
    checks: d.checks.map((c) => ({ ...c, project: c.project ?? '' })),
    warnings: [...d.warnings],
    evaluatedAt: now.toISOString(),
  };
}

/** An Application that cannot be decided on at all (invalid): refused, with the reason. */
function refusalOf(
  r: EarlyRefusal,
  app: { namespace: string; name: string },
  settings: DecisionSettings,
  now: Date,
): apiv1.SyncExplanation {
  return {
    allowed: false,
    reason: r.reason,
    impersonation: settings.impersonation,
    strict: settings.strict,
    identity: '',
    username: '',
    matchedProject: '',
    fallback: '',
    applicationNamespace: app.namespace,
    applicationName: app.name,
    project: r.application?.spec.project ?? '',
    projectChain: [],
    rules: [],
    checks: [{ check: 'application', allowed: false, reason: r.reason, project: '' }],
    warnings: [],
    evaluatedAt: now.toISOString(),
  };
}
