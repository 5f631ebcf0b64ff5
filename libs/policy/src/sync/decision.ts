// What a sync decision is made of (explain.ts makes it): the input, every check and every
// destinationServiceAccounts rule considered, and the identity the sync writes as.
import type { AppProject, Application, ClusterRef } from '../manifests/schemas.js';
import type { ProjectLookup } from '../project/chain.js';
import type { Fallback, ServiceAccount } from '../serviceaccount/resolve.js';
import type { ClusterDirectory } from './destination.js';

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
