// Who a sync writes as: the control plane (impersonation off, the destinationServiceAccounts rules
// ignored) or the ServiceAccount the project chain's rules resolve, with every rule considered.
import type { ProjectChain } from '../project/chain.js';
import { firstMatchingRule, resolveServiceAccount } from '../serviceaccount/resolve.js';
import type { DecisionCheck, ExplainSyncInput, RuleEvaluation, SyncDecision } from './decision.js';
import type { ResolvedDestination } from './destination.js';

export type Identity = Pick<
  SyncDecision,
  | 'identity'
  | 'username'
  | 'serviceAccount'
  | 'matchedRule'
  | 'matchedProject'
  | 'matchedPattern'
  | 'fallback'
>;

export const NO_IDENTITY: Identity = {
  identity: null,
  username: null,
  serviceAccount: null,
  matchedRule: null,
  matchedProject: null,
  matchedPattern: null,
  fallback: null,
};

/** Every destinationServiceAccounts rule of the chain, whether it matched, and which answered. */
export function ruleEvaluations(chain: ProjectChain, server: string, namespace: string): RuleEvaluation[] {
  return chain.projects.flatMap((p) => {
    const first = firstMatchingRule(p, server, namespace);
    return p.serviceAccountRules.map((r) => ({
      project: p.name,
      index: r.index,
      server: r.server,
      namespace: r.namespace,
      defaultServiceAccount: r.defaultServiceAccount,
      serverMatched: r.serverGlob!.match(server),
      namespaceMatched: r.namespaceGlob!.match(namespace),
      firstMatch: r === first,
    }));
  });
}

/** Who the sync writes as: the control plane (impersonation off, rules ignored) or the resolved ServiceAccount. */
export function chooseIdentity(
  chain: ProjectChain,
  destination: ResolvedDestination,
  input: ExplainSyncInput,
  at: { destNamespace: string; appNamespace: string },
): { identity: Identity; check: DecisionCheck; warnings: string[] } {
  if (!input.impersonation) {
    const warnings = chain.projects
      .filter((p) => p.serviceAccountRules.length > 0)
      .map(
        (p) =>
          `project ${JSON.stringify(p.name)} has ${p.serviceAccountRules.length} destinationServiceAccounts rule(s) that are ignored because impersonation is off (application.sync.impersonation.enabled)`,
      );
    return {
      identity: { ...NO_IDENTITY, identity: 'control-plane' },
      check: {
        check: 'service-account',
        allowed: true,
        reason: `impersonation is off: the sync uses the control-plane credentials of cluster ${JSON.stringify(destination.name ?? destination.server)}`,
      },
      warnings,
    };
  }
  const res = resolveServiceAccount(
    chain,
    { server: destination.server, namespace: at.destNamespace, applicationNamespace: at.appNamespace },
    { strict: input.strict },
  );
  const matched = {
    ...NO_IDENTITY,
    matchedRule: res.matchedRule,
    matchedProject: res.matchedProject,
    matchedPattern: res.matchedPattern,
  };
  if (!res.ok)
    return {
      identity: matched,
      check: { check: 'service-account', allowed: false, reason: res.reason },
      warnings: [],
    };
  return {
    identity: {
      ...matched,
      identity: 'service-account',
      username: res.username,
      serviceAccount: res.serviceAccount,
      fallback: res.fallback,
    },
    check: {
      check: 'service-account',
      allowed: true,
      reason: `impersonating ${res.username}: ${res.reason}`,
    },
    warnings: [],
  };
}
