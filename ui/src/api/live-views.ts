// What the UI reads of the responses about an Application's live objects and its identity (the
// resource tree, events, the sync explanation) and of the repository list; as views.ts, the fields
// are named once, in the shapes the api returns (Argo CD's where Argo has them).
export interface ResourceRef {
  group?: string;
  version?: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
}

/** Argo CD's ResourceNode: an object the Application manages (no parentRefs) or one they own. */
export interface ResourceNode extends ResourceRef {
  parentRefs?: ResourceRef[];
  health?: { status?: string; message?: string };
  images?: string[];
  createdAt?: string;
}

export interface ApplicationTree {
  nodes?: ResourceNode[];
  /** Capstan: the node limit cut the tree short. */
  truncated?: boolean;
  /** Capstan: what the ServiceAccount may not list (those objects are missing). */
  warnings?: string[];
}

export interface KubeEvent {
  metadata?: { name?: string; uid?: string };
  reason?: string;
  message?: string;
  type?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  source?: { component?: string };
}

export interface EventList {
  items?: KubeEvent[];
  /** Capstan: why the events could not be listed as the Application's ServiceAccount. */
  error?: string;
}

export interface RuleEvaluation {
  project: string;
  index?: number;
  server?: string;
  namespace?: string;
  defaultServiceAccount?: string;
  serverMatched?: boolean;
  namespaceMatched?: boolean;
  firstMatch?: boolean;
  /** The caller may not get this rule's project: its pattern and ServiceAccount are withheld. */
  withheld?: boolean;
}

export interface DecisionCheck {
  check: string;
  allowed?: boolean;
  reason?: string;
  project?: string;
}

/** explainSync's decision now (GET /api/v1/applications/{name}/sync-explanation). */
export interface SyncExplanation {
  allowed?: boolean;
  reason?: string;
  impersonation?: boolean;
  strict?: boolean;
  identity?: string;
  username?: string;
  serviceAccount?: { namespace?: string; name?: string };
  matchedRule?: number;
  matchedProject?: string;
  fallback?: string;
  project?: string;
  projectChain?: string[];
  destination?: { server?: string; name?: string; namespace?: string };
  rules?: RuleEvaluation[];
  checks?: DecisionCheck[];
  warnings?: string[];
  evaluatedAt?: string;
}

export interface Repository {
  repo: string;
  project?: string;
  type?: string;
  name?: string;
  username?: string;
  hasPassword?: boolean;
  hasSshPrivateKey?: boolean;
  insecure?: boolean;
  secretName?: string;
  /** The projects whose Applications resolve to this credential: they share one checkout. */
  sharedCheckoutProjects?: string[];
}
