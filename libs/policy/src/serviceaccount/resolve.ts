// ServiceAccount resolution (docs/architecture.md "The rules at the heart", proposal 000), assuming
// impersonation is on; explainSync handles the switch. This is the hot path of every sync: the
// chain is compiled once, a resolution is a few string comparisons per rule.
//
// Within one project: the first destinationServiceAccounts entry whose `server` glob matches the
// resolved cluster URL and whose `namespace` glob matches the Application's destination namespace
// (as written: '' when absent, which only '' and '*'-like patterns match, as in Argo CD) wins.
// `name` lives in the destination namespace, or the Application's own namespace when that is
// empty; `namespace:name` names both. No match: the `default` ServiceAccount of that namespace
// (the proposal's behaviour), or a refusal in strict mode.
//
// Along a parentProject chain (Capstan's rule, so self-service cannot reopen the escalation that
// impersonation closes): every project answers for the destination with its own first matching
// rule; a project without a matching rule answers what its parent answers; the root's fallback
// (default ServiceAccount, or refusal in strict mode) is the answer above the root. A project's
// own answer must be the same ServiceAccount as its parent's answer, otherwise the sync is
// refused. So a child can restate but never change the identity its ancestors would use, and a
// project under a parent that declares nothing for the destination can only use the fallback.
import type { CompiledProject, CompiledServiceAccountRule } from '../project/compile.js';
import type { ProjectChain } from '../project/chain.js';
import { dnsLabelProblem, serviceAccountUsername } from './names.js';

export interface ServiceAccountRequest {
  /** Server URL of the resolved cluster (also when the Application names its destination by cluster name). */
  readonly server: string;
  /** Application.spec.destination.namespace as written ('' when absent). */
  readonly namespace: string;
  /** Application.metadata.namespace: where a bare `name` lives when the destination namespace is empty. */
  readonly applicationNamespace: string;
}

export interface ServiceAccount {
  readonly namespace: string;
  readonly name: string;
}

export type Fallback = 'default-service-account';

export type ResolutionRefusal =
  'invalid-service-account' | 'no-namespace' | 'no-match-strict' | 'parent-disagrees';

interface MatchInfo {
  /** Index into the deciding project's destinationServiceAccounts, or null (fallback). */
  readonly matchedRule: number | null;
  /** The project whose rule decided (the one nearest the Application among those that agreed). */
  readonly matchedProject: string | null;
  readonly matchedPattern: { readonly server: string; readonly namespace: string } | null;
}

export type ServiceAccountResolution =
  | (MatchInfo & {
      readonly ok: true;
      readonly serviceAccount: ServiceAccount;
      readonly username: string;
      readonly fallback: Fallback | null;
      readonly reason: string;
    })
  | (MatchInfo & { readonly ok: false; readonly code: ResolutionRefusal; readonly reason: string });

export interface ResolveOptions {
  /** Refuse instead of falling back to the `default` ServiceAccount when nothing matches. */
  readonly strict: boolean;
}

/** The first rule of one project matching the destination, or undefined. Patterns are precompiled. */
export function firstMatchingRule(
  project: CompiledProject,
  server: string,
  namespace: string,
): CompiledServiceAccountRule | undefined {
  const rules = project.serviceAccountRules;
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]!;
    if (r.serverGlob!.match(server) && r.namespaceGlob!.match(namespace)) return r;
  }
  return undefined;
}

const NO_MATCH: MatchInfo = { matchedRule: null, matchedProject: null, matchedPattern: null };

type Account = { ok: true; sa: ServiceAccount } | { ok: false; code: ResolutionRefusal; reason: string };

function accountOf(rule: CompiledServiceAccountRule, project: string, saNamespace: string): Account {
  const a = rule.account;
  const where = `project ${JSON.stringify(project)} destinationServiceAccounts[${rule.index}].defaultServiceAccount`;
  if (a.kind === 'invalid')
    return {
      ok: false,
      code: 'invalid-service-account',
      reason: `${where} ${JSON.stringify(rule.defaultServiceAccount)} ${a.problem}`,
    };
  if (rule.fixedAccount !== undefined) return { ok: true, sa: rule.fixedAccount };
  return defaultNamespaceAccount(saNamespace, a.name, where);
}

// Namespaces already found to be DNS labels: the regex runs once per namespace, not per sync.
const validNamespaces = new Set<string>();
function rememberValid(ns: string): void {
  if (validNamespaces.size >= 10_000) validNamespaces.clear();
  validNamespaces.add(ns);
}

function defaultNamespaceAccount(saNamespace: string, name: string, what: string): Account {
  // Fail closed: never build a username with an empty or malformed namespace.
  if (saNamespace === '')
    return {
      ok: false,
      code: 'no-namespace',
      reason: `${what}: the ServiceAccount namespace is unknown (the Application has no destination namespace and no namespace of its own)`,
    };
  const problem = validNamespaces.has(saNamespace) ? undefined : dnsLabelProblem(saNamespace);
  if (problem === undefined) rememberValid(saNamespace);
  if (problem)
    return {
      ok: false,
      code: 'invalid-service-account',
      reason: `${what}: namespace ${JSON.stringify(saNamespace)} ${problem}`,
    };
  return { ok: true, sa: { namespace: saNamespace, name } };
}

function same(a: ServiceAccount, b: ServiceAccount): boolean {
  return a.namespace === b.namespace && a.name === b.name;
}

function show(sa: ServiceAccount): string {
  return `${sa.namespace}:${sa.name}`;
}

function matchInfo(project: CompiledProject, rule: CompiledServiceAccountRule): MatchInfo {
  return { matchedRule: rule.index, matchedProject: project.name, matchedPattern: rule.pattern };
}

/** A resolution decided by a rule; a class so that the lazy reason lives on the prototype. */
class RuleResolution {
  readonly ok = true as const;
  readonly matchedRule: number;
  readonly matchedProject: string;
  readonly matchedPattern: { readonly server: string; readonly namespace: string };
  readonly username: string;
  readonly fallback = null;
  constructor(
    project: CompiledProject,
    private readonly rule: CompiledServiceAccountRule,
    readonly serviceAccount: ServiceAccount,
    private readonly req: ServiceAccountRequest,
  ) {
    this.matchedRule = rule.index;
    this.matchedProject = project.name;
    this.matchedPattern = rule.pattern;
    this.username = serviceAccountUsername(serviceAccount.namespace, serviceAccount.name);
  }

  get reason(): string {
    const { rule, req } = this;
    return `project ${JSON.stringify(this.matchedProject)} destinationServiceAccounts[${rule.index}] (server ${JSON.stringify(rule.server)}, namespace ${JSON.stringify(rule.namespace)}) is the first rule matching server ${JSON.stringify(req.server)}, namespace ${JSON.stringify(req.namespace)}`;
  }

  toJSON() {
    const { ok, matchedRule, matchedProject, matchedPattern, serviceAccount, username, fallback, reason } =
      this;
    return { ok, matchedRule, matchedProject, matchedPattern, serviceAccount, username, fallback, reason };
  }
}

export function resolveServiceAccount(
  chain: ProjectChain,
  req: ServiceAccountRequest,
  options: ResolveOptions,
): ServiceAccountResolution {
  const saNamespace = req.namespace !== '' ? req.namespace : req.applicationNamespace;
  const projects = chain.projects;
  const root = projects.length - 1;
  let decided: { sa: ServiceAccount; project: CompiledProject; rule: CompiledServiceAccountRule } | undefined;

  for (let i = root; i >= 0; i--) {
    const project = projects[i]!;
    if (project.serviceAccountRules.length === 0) continue;
    const rule = firstMatchingRule(project, req.server, req.namespace);
    if (rule === undefined) continue;
    const account = accountOf(rule, project.name, saNamespace);
    const info = matchInfo(project, rule);
    if (!account.ok) return { ok: false, ...info, code: account.code, reason: account.reason };
    const ruleText = () =>
      `project ${JSON.stringify(project.name)} destinationServiceAccounts[${rule.index}] resolves ${show(account.sa)}`;

    if (decided !== undefined) {
      if (!same(decided.sa, account.sa)) {
        return {
          ok: false,
          ...info,
          code: 'parent-disagrees',
          reason: `${ruleText()}, but its parent chain resolves ${show(decided.sa)} (project ${JSON.stringify(decided.project.name)} destinationServiceAccounts[${decided.rule.index}]); a project cannot run a sync as a ServiceAccount its parents would not use for this destination`,
        };
      }
    } else if (i !== root) {
      // No ancestor has a rule for this destination: above this project, the fallback answers.
      const parents = projects
        .slice(i + 1)
        .map((p) => JSON.stringify(p.name))
        .join(', ');
      if (options.strict) {
        return {
          ok: false,
          ...info,
          code: 'parent-disagrees',
          reason: `${ruleText()}, but no parent (${parents}) has a destinationServiceAccounts rule for this destination and strict mode refuses there; a project cannot choose a ServiceAccount its parents would not use`,
        };
      }
      const fallback = defaultNamespaceAccount(saNamespace, 'default', 'default ServiceAccount');
      if (!fallback.ok || !same(fallback.sa, account.sa)) {
        return {
          ok: false,
          ...info,
          code: 'parent-disagrees',
          reason: `${ruleText()}, but no parent (${parents}) has a destinationServiceAccounts rule for this destination, so they would use ${fallback.ok ? show(fallback.sa) : 'no ServiceAccount'}; declare the ServiceAccount in a parent's destinationServiceAccounts`,
        };
      }
    }
    decided = { sa: account.sa, project, rule };
  }

  if (decided !== undefined) {
    const { sa, project, rule } = decided;
    // The reason is built only when read: this path runs for every sync and in the benchmark.
    return new RuleResolution(project, rule, sa, req);
  }

  const where = `server ${JSON.stringify(req.server)}, namespace ${JSON.stringify(req.namespace)}`;
  if (options.strict) {
    return {
      ok: false,
      ...NO_MATCH,
      code: 'no-match-strict',
      reason: `no destinationServiceAccounts rule of ${chain.names.map((n) => JSON.stringify(n)).join(', ')} matches ${where}, and strict mode refuses instead of using the default ServiceAccount`,
    };
  }
  const fallback = defaultNamespaceAccount(saNamespace, 'default', 'default ServiceAccount');
  if (!fallback.ok)
    return {
      ok: false,
      ...NO_MATCH,
      code: fallback.code,
      reason: `no destinationServiceAccounts rule matches ${where}; ${fallback.reason}`,
    };
  return {
    ok: true,
    ...NO_MATCH,
    serviceAccount: fallback.sa,
    username: serviceAccountUsername(fallback.sa.namespace, fallback.sa.name),
    fallback: 'default-service-account',
    reason: `no destinationServiceAccounts rule matches ${where}; using the default ServiceAccount of namespace ${JSON.stringify(fallback.sa.namespace)}`,
  };
}
