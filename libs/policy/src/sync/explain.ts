// The whole sync decision in one call, for the sync service (which records it in
// audit.sync_decisions before touching a cluster) and for `capstan sync explain` (which prints
// it): every check, every destinationServiceAccounts rule considered, the identity and why.
import { formatIssues } from '../issues.js';
import type { AppProject, Application, ClusterRef } from '../manifests/schemas.js';
import { applicationSources, DEFAULT_CONTROL_NAMESPACE } from '../manifests/schemas.js';
import { ProjectChain, type ProjectLookup } from '../project/chain.js';
import { applicationIssues } from '../project/validate.js';
import {
  firstMatchingRule,
  resolveServiceAccount,
  type Fallback,
  type ServiceAccount,
} from '../serviceaccount/resolve.js';
import { checkDeliveredProjects } from './delivered-projects.js';
import { syncWindowsVerdict } from '../project/sync-windows.js';
import { ClusterDirectory, type ResolvedDestination } from './destination.js';

export interface ExplainSyncInput {
  readonly application: Application;
  readonly projects: ProjectLookup;
  readonly clusters: ClusterDirectory | readonly ClusterRef[];
  /** application.sync.impersonation.enabled */
  readonly impersonation: boolean;
  /** Refuse instead of using the `default` ServiceAccount when no rule matches. */
  readonly strict: boolean;
  /** Argo CD's control-plane namespace: Applications elsewhere need the projects' sourceNamespaces. */
  readonly controlNamespace?: string;
  /**
   * Refuse a destination server that is not a registered cluster (the sync service: it has no
   * credentials for it). The offline CLI passes false and gets a warning instead.
   */
  readonly requireRegisteredCluster?: boolean;
  /**
   * When the sync would start, for the projects' syncWindows; absent: windows are not evaluated
   * (an offline explanation that does not say when).
   */
  readonly now?: Date;
  /** A sync asked for by a person (Argo CD's manual sync, for windows with manualSync); default true. */
  readonly manual?: boolean;
  /** AppProjects among the objects the sync would apply (checked against allowedParentProjects). */
  readonly deliveredProjects?: readonly AppProject[];
  /**
   * Objects the sync would apply, with their scope from discovery: checked against the resource
   * lists, and a namespaced object's own namespace against the destinations.
   */
  readonly resources?: ReadonlyArray<{
    readonly group: string;
    readonly kind: string;
    readonly namespaced: boolean;
    readonly namespace?: string | undefined;
    readonly name?: string | undefined;
  }>;
}

export type CheckName =
  | 'application'
  | 'project-chain'
  | 'destination-cluster'
  | 'application-namespace'
  | 'source-repository'
  | 'destination'
  | 'sync-window'
  | 'delivered-project'
  | 'resource'
  | 'service-account';

export interface DecisionCheck {
  readonly check: CheckName;
  readonly allowed: boolean;
  readonly reason: string;
  /** The project that denied, when a project restriction denied. */
  readonly project?: string;
}

export interface RuleEvaluation {
  readonly project: string;
  readonly index: number;
  readonly server: string;
  readonly namespace: string;
  readonly defaultServiceAccount: string;
  readonly serverMatched: boolean;
  readonly namespaceMatched: boolean;
  /** This is the first matching rule of its project (the one that project answers with). */
  readonly firstMatch: boolean;
}

export interface SyncDecision {
  readonly allowed: boolean;
  /** The first refusal, or why this identity was chosen. */
  readonly reason: string;
  readonly impersonation: boolean;
  readonly strict: boolean;
  /** Who the sync writes as: null when refused. */
  readonly identity: 'service-account' | 'control-plane' | null;
  /** The impersonated Kubernetes username; null when the control-plane identity is used or the sync is refused. */
  readonly username: string | null;
  readonly serviceAccount: ServiceAccount | null;
  /** Index into matchedProject's destinationServiceAccounts; null when no rule decided. */
  readonly matchedRule: number | null;
  readonly matchedProject: string | null;
  readonly matchedPattern: { readonly server: string; readonly namespace: string } | null;
  readonly fallback: Fallback | null;
  readonly application: { readonly namespace: string; readonly name: string };
  readonly project: string;
  /** The Application's project first, its root last; as far as it could be resolved. */
  readonly projectChain: readonly string[];
  readonly destination: {
    readonly server: string | null;
    readonly name: string | null;
    readonly namespace: string;
    /** Where a bare ServiceAccount name lives: the destination namespace, else the Application's. */
    readonly serviceAccountNamespace: string;
  };
  readonly rules: readonly RuleEvaluation[];
  readonly checks: readonly DecisionCheck[];
  readonly warnings: readonly string[];
}

export function explainSync(input: ExplainSyncInput): SyncDecision {
  const app = input.application;
  const controlNamespace = input.controlNamespace ?? DEFAULT_CONTROL_NAMESPACE;
  const appNamespace = app.metadata.namespace ?? controlNamespace;
  const clusters =
    input.clusters instanceof ClusterDirectory ? input.clusters : new ClusterDirectory(input.clusters);
  const checks: DecisionCheck[] = [];
  const warnings: string[] = [];
  const rules: RuleEvaluation[] = [];
  const destNamespace = app.spec.destination.namespace ?? '';
  let projectChain: string[] = [app.spec.project];
  let destination: ResolvedDestination | undefined;
  let identity: Pick<
    SyncDecision,
    | 'identity'
    | 'username'
    | 'serviceAccount'
    | 'matchedRule'
    | 'matchedProject'
    | 'matchedPattern'
    | 'fallback'
  > = {
    identity: null,
    username: null,
    serviceAccount: null,
    matchedRule: null,
    matchedProject: null,
    matchedPattern: null,
    fallback: null,
  };

  // file:// sources are the operator's call, made when the Application is written and when it renders.
  const appProblems = applicationIssues(app, { allowFileUrls: true });
  checks.push(
    appProblems.length > 0
      ? {
          check: 'application',
          allowed: false,
          reason: `Application ${JSON.stringify(app.metadata.name)} is invalid: ${formatIssues(appProblems)}`,
        }
      : { check: 'application', allowed: true, reason: 'Application is valid' },
  );

  const resolvedDest = clusters.resolve(app);
  if (resolvedDest.ok) {
    destination = resolvedDest.destination;
    if (!destination.registered) {
      const msg = `cluster with server ${JSON.stringify(destination.server)} is not registered`;
      if (input.requireRegisteredCluster)
        checks.push({ check: 'destination-cluster', allowed: false, reason: msg });
      else warnings.push(`${msg}; assuming it exists`);
    }
    if (destination.registered || !input.requireRegisteredCluster) {
      checks.push({
        check: 'destination-cluster',
        allowed: true,
        reason: `destination server is ${JSON.stringify(destination.server)}${destination.name ? ` (cluster ${JSON.stringify(destination.name)})` : ''}`,
      });
    }
  } else {
    checks.push({ check: 'destination-cluster', allowed: false, reason: resolvedDest.reason });
  }

  const chainResult = ProjectChain.resolve(app.spec.project, input.projects);
  if (!chainResult.ok) {
    projectChain = [...chainResult.path];
    checks.push({ check: 'project-chain', allowed: false, reason: chainResult.reason });
  } else {
    const chain = chainResult.chain;
    projectChain = chain.names;
    checks.push({
      check: 'project-chain',
      allowed: true,
      reason:
        chain.projects.length > 1
          ? `bounded by ${chain.names.join(' -> ')}`
          : `project ${JSON.stringify(chain.project.name)} has no parent`,
    });

    const nsCheck = chain.permitsApplicationNamespace(appNamespace, controlNamespace);
    checks.push({
      check: 'application-namespace',
      ...nsCheck,
      ...(nsCheck.deniedBy ? { project: nsCheck.deniedBy } : {}),
    });
    for (const src of applicationSources(app)) {
      const c = chain.permitsSource(src.repoURL);
      checks.push({
        check: 'source-repository',
        allowed: c.allowed,
        reason: c.reason,
        ...(c.deniedBy ? { project: c.deniedBy } : {}),
      });
    }
    if (destination) {
      const c = chain.permitsDestination(destination);
      checks.push({
        check: 'destination',
        allowed: c.allowed,
        reason: c.reason,
        ...(c.deniedBy ? { project: c.deniedBy } : {}),
      });
    }
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
    for (const d of checkDeliveredProjects(app, input.deliveredProjects ?? [], input.projects, clusters)) {
      checks.push({ check: 'delivered-project', allowed: d.allowed, reason: d.reason });
    }
    for (const r of input.resources ?? []) {
      const c = chain.permitsResource(r, r.namespaced);
      checks.push({
        check: 'resource',
        allowed: c.allowed,
        reason: c.reason,
        ...(c.deniedBy ? { project: c.deniedBy } : {}),
      });
      // A namespaced object may name its own namespace: that namespace must be a permitted destination too.
      if (destination && r.namespaced && r.namespace && r.namespace !== destNamespace) {
        const d = chain.permitsDestination({ ...destination, namespace: r.namespace });
        checks.push({
          check: 'destination',
          allowed: d.allowed,
          reason: `${r.kind} ${JSON.stringify(r.name ?? '')}: ${d.reason}`,
          ...(d.deniedBy ? { project: d.deniedBy } : {}),
        });
      }
    }

    if (destination) {
      for (const p of chain.projects) {
        const first = firstMatchingRule(p, destination.server, destNamespace);
        for (const r of p.serviceAccountRules) {
          const serverMatched = r.serverGlob!.match(destination.server);
          const namespaceMatched = r.namespaceGlob!.match(destNamespace);
          rules.push({
            project: p.name,
            index: r.index,
            server: r.server,
            namespace: r.namespace,
            defaultServiceAccount: r.defaultServiceAccount,
            serverMatched,
            namespaceMatched,
            firstMatch: r === first,
          });
        }
      }
      if (!input.impersonation) {
        identity = { ...identity, identity: 'control-plane' };
        for (const p of chain.projects) {
          if (p.serviceAccountRules.length > 0) {
            warnings.push(
              `project ${JSON.stringify(p.name)} has ${p.serviceAccountRules.length} destinationServiceAccounts rule(s) that are ignored because impersonation is off (application.sync.impersonation.enabled)`,
            );
          }
        }
        checks.push({
          check: 'service-account',
          allowed: true,
          reason: `impersonation is off: the sync uses the control-plane credentials of cluster ${JSON.stringify(destination.name ?? destination.server)}`,
        });
      } else {
        const res = resolveServiceAccount(
          chain,
          { server: destination.server, namespace: destNamespace, applicationNamespace: appNamespace },
          { strict: input.strict },
        );
        identity = {
          ...identity,
          matchedRule: res.matchedRule,
          matchedProject: res.matchedProject,
          matchedPattern: res.matchedPattern,
        };
        if (res.ok) {
          identity = {
            ...identity,
            identity: 'service-account',
            username: res.username,
            serviceAccount: res.serviceAccount,
            fallback: res.fallback,
          };
          checks.push({
            check: 'service-account',
            allowed: true,
            reason: `impersonating ${res.username}: ${res.reason}`,
          });
        } else {
          checks.push({ check: 'service-account', allowed: false, reason: res.reason });
        }
      }
    }
  }

  const refusal = checks.find((c) => !c.allowed);
  const allowed = refusal === undefined;
  if (!allowed) {
    // Nothing is written when refused: no identity, whatever the rules would have chosen.
    identity = { ...identity, identity: null, username: null, serviceAccount: null, fallback: null };
  }
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
