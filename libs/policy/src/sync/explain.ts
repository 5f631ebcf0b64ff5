// The whole sync decision in one call, for the sync service (which records it in
// audit.sync_decisions before touching a cluster) and for `capstan sync explain` (which prints
// it): every check, every destinationServiceAccounts rule considered, the identity and why.
import { formatIssues } from '../issues.js';
import type { Application } from '../manifests/schemas.js';
import { applicationSources, DEFAULT_CONTROL_NAMESPACE } from '../manifests/schemas.js';
import { ProjectChain, type ChainCheck } from '../project/chain.js';
import { applicationIssues } from '../project/validate.js';
import { checkDeliveredProjects } from './delivered-projects.js';
import { syncWindowsVerdict } from '../project/sync-windows.js';
import { ClusterDirectory, type ResolvedDestination } from './destination.js';
import type { CheckName, DecisionCheck, ExplainSyncInput, RuleEvaluation, SyncDecision } from './decision.js';
import { chooseIdentity, NO_IDENTITY, ruleEvaluations } from './identity.js';

/**
 * The decision, in named steps: the Application itself; its destination cluster; its project
 * chain and every restriction of the chain; the destinationServiceAccounts rules considered; the
 * identity. The first refusal decides, and a refused sync has no identity.
 */
export function explainSync(input: ExplainSyncInput): SyncDecision {
  const app = input.application;
  const controlNamespace = input.controlNamespace ?? DEFAULT_CONTROL_NAMESPACE;
  const appNamespace = app.metadata.namespace ?? controlNamespace;
  const clusters =
    input.clusters instanceof ClusterDirectory ? input.clusters : new ClusterDirectory(input.clusters);
  const destNamespace = app.spec.destination.namespace ?? '';
  const warnings: string[] = [];
  const checks: DecisionCheck[] = [applicationCheck(app)];
  const dest = destinationClusterChecks(app, clusters, input.requireRegisteredCluster === true);
  checks.push(...dest.checks);
  warnings.push(...dest.warnings);
  const destination = dest.destination;

  let projectChain: string[] = [app.spec.project];
  let rules: RuleEvaluation[] = [];
  let identity = NO_IDENTITY;
  const chainResult = ProjectChain.resolve(app.spec.project, input.projects);
  if (!chainResult.ok) {
    projectChain = [...chainResult.path];
    checks.push({ check: 'project-chain', allowed: false, reason: chainResult.reason });
  } else {
    const chain = chainResult.chain;
    projectChain = chain.names;
    checks.push(
      ...restrictionChecks(chain, input, {
        destination,
        destNamespace,
        appNamespace,
        controlNamespace,
        clusters,
      }),
    );
    if (destination) {
      rules = ruleEvaluations(chain, destination.server, destNamespace);
      const chosen = chooseIdentity(chain, destination, input, { destNamespace, appNamespace });
      identity = chosen.identity;
      checks.push(chosen.check);
      warnings.push(...chosen.warnings);
    }
  }

  const refusal = checks.find((c) => !c.allowed);
  const allowed = refusal === undefined;
  // Nothing is written when refused: no identity, whatever the rules would have chosen.
  if (!allowed)
    identity = { ...identity, identity: null, username: null, serviceAccount: null, fallback: null };
  const decided = checks.find((c) => c.check === 'service-account');
  return {
    allowed,
    reason: refusal ? refusal.reason : (decided?.reason ?? 'allowed'),
    impersonation: input.impersonation,
    strict: input.strict,
    ...identity,
    application: { namespace: appNamespace, name: app.metadata.name },
    project: app.spec.project,
    projectChain,
    destination: {
      server: destination?.server ?? null,
      name: destination?.name ?? null,
      namespace: destNamespace,
      serviceAccountNamespace: destNamespace !== '' ? destNamespace : appNamespace,
    },
    rules,
    checks,
    warnings,
  };
}

/** file:// sources are the operator's call, made when the Application is written and when it renders. */
function applicationCheck(app: Application): DecisionCheck {
  const problems = applicationIssues(app, { allowFileUrls: true });
  return problems.length > 0
    ? {
        check: 'application',
        allowed: false,
        reason: `Application ${JSON.stringify(app.metadata.name)} is invalid: ${formatIssues(problems)}`,
      }
    : { check: 'application', allowed: true, reason: 'Application is valid' };
}

/** The destination's cluster: registered (or, offline, assumed with a warning). */
function destinationClusterChecks(
  app: Application,
  clusters: ClusterDirectory,
  requireRegistered: boolean,
): { destination?: ResolvedDestination; checks: DecisionCheck[]; warnings: string[] } {
  const resolved = clusters.resolve(app);
  if (!resolved.ok)
    return {
      checks: [{ check: 'destination-cluster', allowed: false, reason: resolved.reason }],
      warnings: [],
    };
  const destination = resolved.destination;
  const checks: DecisionCheck[] = [];
  const warnings: string[] = [];
  if (!destination.registered) {
    const msg = `cluster with server ${JSON.stringify(destination.server)} is not registered`;
    if (requireRegistered) checks.push({ check: 'destination-cluster', allowed: false, reason: msg });
    else warnings.push(`${msg}; assuming it exists`);
  }
  if (destination.registered || !requireRegistered)
    checks.push({
      check: 'destination-cluster',
      allowed: true,
      reason: `destination server is ${JSON.stringify(destination.server)}${destination.name ? ` (cluster ${JSON.stringify(destination.name)})` : ''}`,
    });
  return { destination, checks, warnings };
}

const fromChain = (check: CheckName, c: ChainCheck, reason = c.reason): DecisionCheck => ({
  check,
  allowed: c.allowed,
  reason,
  ...(c.deniedBy ? { project: c.deniedBy } : {}),
});

/**
 * Every restriction of the chain: where the Application lives, its sources, its destination, the
 * sync windows, the AppProjects it delivers, and each object (kind, and its own namespace).
 */
function restrictionChecks(
  chain: ProjectChain,
  input: ExplainSyncInput,
  at: {
    destination: ResolvedDestination | undefined;
    destNamespace: string;
    appNamespace: string;
    controlNamespace: string;
    clusters: ClusterDirectory;
  },
): DecisionCheck[] {
  const app = input.application;
  const { destination, destNamespace } = at;
  const checks: DecisionCheck[] = [
    {
      check: 'project-chain',
      allowed: true,
      reason:
        chain.projects.length > 1
          ? `bounded by ${chain.names.join(' -> ')}`
          : `project ${JSON.stringify(chain.project.name)} has no parent`,
    },
    fromChain(
      'application-namespace',
      chain.permitsApplicationNamespace(at.appNamespace, at.controlNamespace),
    ),
  ];
  for (const src of applicationSources(app))
    checks.push(fromChain('source-repository', chain.permitsSource(src.repoURL)));
  if (destination) checks.push(fromChain('destination', chain.permitsDestination(destination)));
  if (destination && input.now) {
    const w = syncWindowsVerdict(
      chain.projects,
      {
        name: app.metadata.name,
        namespace: destNamespace,
        server: destination.server,
        clusterName: destination.name,
      },
      input.manual ?? true,
      input.now,
    );
    checks.push({
      check: 'sync-window',
      allowed: w.allowed,
      reason: w.reason,
      ...(w.deniedBy ? { project: w.deniedBy } : {}),
    });
  }
  for (const d of checkDeliveredProjects(app, input.deliveredProjects ?? [], input.projects, at.clusters))
    checks.push({ check: 'delivered-project', allowed: d.allowed, reason: d.reason });
  for (const r of input.resources ?? []) {
    checks.push(fromChain('resource', chain.permitsResource(r, r.namespaced)));
    // A namespaced object may name its own namespace: that namespace must be a permitted destination too.
    if (destination && r.namespaced && r.namespace && r.namespace !== destNamespace) {
      const d = chain.permitsDestination({ ...destination, namespace: r.namespace });
      checks.push(fromChain('destination', d, `${r.kind} ${JSON.stringify(r.name ?? '')}: ${d.reason}`));
    }
  }
  return checks;
}
