// Argo CD's `argoproj.io/v1alpha1` AppProject and Application, as Argo CD writes them.
//
// Strictness is chosen field by field: `spec` and the objects that decide who may do what
// (destinations, destinationServiceAccounts) are strict, so a typo such as
// `destinationServiceAcounts` is an error instead of a silently ignored rule that would make the
// sync fall back to another identity; the parts Capstan only carries along (metadata, helm
// parameters, roles, status) are loose, so newer Argo CD fields pass through.
// Capstan's additions from the self-service proposal: AppProject `spec.parentProject` and
// Application `spec.allowedParentProjects`.
import { z } from 'zod';
import { DirectorySourceSchema, HelmSourceSchema, KustomizeSourceSchema } from './source-options.js';

export const ARGO_API_VERSION = 'argoproj.io/v1alpha1';
/** Namespace Argo CD objects live in when their manifest does not say (Argo CD's control-plane namespace). */
export const DEFAULT_CONTROL_NAMESPACE = 'argocd';

/** `null` in YAML (`destinations:` with nothing after it) means "absent", as Go's nil does. */
function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => (v === null ? undefined : v) as z.output<T> | undefined);
}

const stringList = z.array(z.string());

export const MetadataSchema = z.looseObject({
  name: z.string().min(1, 'must not be empty'),
  namespace: optional(z.string().min(1, 'must not be empty')),
  labels: optional(z.record(z.string(), z.string())),
  annotations: optional(z.record(z.string(), z.string())),
});

export const ApplicationDestinationSchema = z.strictObject({
  server: optional(z.string()),
  namespace: optional(z.string()),
  name: optional(z.string()),
});

export const DestinationServiceAccountSchema = z.strictObject({
  server: z.string(),
  // Go's zero value: an omitted namespace is '' and matches only Applications without one.
  namespace: optional(z.string()).transform((v) => v ?? ''),
  defaultServiceAccount: z.string(),
});

export const GroupKindSchema = z.looseObject({
  group: optional(z.string()).transform((v) => v ?? ''),
  kind: z.string(),
  /** Argo CD 3: only resources with a matching name (Go filepath.Match glob); '' means any. */
  name: optional(z.string()),
});

/** Argo CD's SyncWindow (checked further in project/sync-windows.ts). */
export const SyncWindowSchema = z.strictObject({
  kind: z.string(),
  schedule: z.string(),
  duration: z.string(),
  applications: optional(stringList),
  namespaces: optional(stringList),
  clusters: optional(stringList),
  manualSync: optional(z.boolean()),
  timeZone: optional(z.string()),
  andOperator: optional(z.boolean()),
  description: optional(z.string()),
});

export const AppProjectSpecSchema = z.strictObject({
  description: optional(z.string()),
  sourceRepos: optional(stringList),
  sourceNamespaces: optional(stringList),
  destinations: optional(z.array(ApplicationDestinationSchema)),
  destinationServiceAccounts: optional(z.array(DestinationServiceAccountSchema)),
  clusterResourceWhitelist: optional(z.array(GroupKindSchema)),
  clusterResourceBlacklist: optional(z.array(GroupKindSchema)),
  namespaceResourceWhitelist: optional(z.array(GroupKindSchema)),
  namespaceResourceBlacklist: optional(z.array(GroupKindSchema)),
  roles: optional(z.array(z.looseObject({ name: z.string() }))),
  syncWindows: optional(z.array(SyncWindowSchema)),
  orphanedResources: optional(z.looseObject({})),
  signatureKeys: optional(z.array(z.looseObject({ keyID: z.string() }))),
  permitOnlyProjectScopedClusters: optional(z.boolean()),
  parentProject: optional(z.string().min(1, 'must not be empty')),
});

export const AppProjectSchema = z.looseObject({
  apiVersion: z.literal(ARGO_API_VERSION),
  kind: z.literal('AppProject'),
  metadata: MetadataSchema,
  spec: optional(AppProjectSpecSchema).transform((v) => v ?? AppProjectSpecSchema.parse({})),
});

export const ApplicationSourceSchema = z.looseObject({
  repoURL: z.string().min(1, 'must not be empty'),
  path: optional(z.string()),
  targetRevision: optional(z.string()),
  chart: optional(z.string()),
  ref: optional(z.string()),
  name: optional(z.string()),
  helm: optional(HelmSourceSchema),
  kustomize: optional(KustomizeSourceSchema),
  directory: optional(DirectorySourceSchema),
});

/** A duration as Argo CD's retry backoff reads it: a Go duration ("5s", "3m", "1h30m", "500ms") or bare seconds ("30"). */
const GoDurationSchema = z
  .string()
  .regex(
    /^(\d+|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$/,
    'expected a duration such as "5s", "3m", "1h30m" or seconds ("30")',
  );

export const RetryStrategySchema = z.looseObject({
  /** Argo CD: a negative limit retries without end. */
  limit: optional(z.number().int()),
  backoff: optional(
    z.looseObject({
      duration: optional(z.union([GoDurationSchema, z.number().int().nonnegative()])),
      factor: optional(z.number().int().positive('must be at least 1')),
      maxDuration: optional(GoDurationSchema),
    }),
  ),
});

export const SyncPolicySchema = z.looseObject({
  automated: optional(
    z.looseObject({
      prune: optional(z.boolean()),
      selfHeal: optional(z.boolean()),
      allowEmpty: optional(z.boolean()),
      enabled: optional(z.boolean()),
    }),
  ),
  syncOptions: optional(stringList),
  retry: optional(RetryStrategySchema),
  managedNamespaceMetadata: optional(
    z.looseObject({
      labels: optional(z.record(z.string(), z.string())),
      annotations: optional(z.record(z.string(), z.string())),
    }),
  ),
});

/** Argo CD's spec.ignoreDifferences entry (what a comparison leaves out, for which resources). */
export const IgnoreDifferencesSchema = z.strictObject({
  group: optional(z.string()),
  kind: z.string().min(1, 'must not be empty'),
  name: optional(z.string()),
  namespace: optional(z.string()),
  jsonPointers: optional(z.array(z.string().regex(/^(\/.*)?$/, 'a JSON pointer starts with "/"'))),
  jqPathExpressions: optional(stringList),
  managedFieldsManagers: optional(stringList),
});

export const ApplicationSpecSchema = z.strictObject({
  project: z.string().min(1, 'must not be empty'),
  destination: ApplicationDestinationSchema,
  source: optional(ApplicationSourceSchema),
  sources: optional(z.array(ApplicationSourceSchema)),
  sourceHydrator: optional(z.looseObject({})),
  syncPolicy: optional(SyncPolicySchema),
  ignoreDifferences: optional(z.array(IgnoreDifferencesSchema).max(100)),
  info: optional(z.array(z.looseObject({}))),
  revisionHistoryLimit: optional(z.number().int()),
  allowedParentProjects: optional(stringList),
});

export const ApplicationSchema = z.looseObject({
  apiVersion: z.literal(ARGO_API_VERSION),
  kind: z.literal('Application'),
  metadata: MetadataSchema,
  spec: ApplicationSpecSchema,
});

export const CLUSTER_SECRET_LABEL = 'argocd.argoproj.io/secret-type';

/** Argo CD's declarative cluster Secret; only name, server and project are ever read from it. */
export const ClusterSecretSchema = z.looseObject({
  apiVersion: z.literal('v1'),
  kind: z.literal('Secret'),
  metadata: MetadataSchema,
  data: optional(z.record(z.string(), z.string())),
  stringData: optional(z.record(z.string(), z.string())),
});

export type AppProject = z.output<typeof AppProjectSchema>;
export type AppProjectSpec = z.output<typeof AppProjectSpecSchema>;
export type Application = z.output<typeof ApplicationSchema>;
export type ApplicationSpec = z.output<typeof ApplicationSpecSchema>;
export type ApplicationSource = z.output<typeof ApplicationSourceSchema>;
export type ApplicationDestination = z.output<typeof ApplicationDestinationSchema>;
export type DestinationServiceAccount = z.output<typeof DestinationServiceAccountSchema>;
export type GroupKind = z.output<typeof GroupKindSchema>;
export type SyncWindow = z.output<typeof SyncWindowSchema>;
export type IgnoreDifferences = z.output<typeof IgnoreDifferencesSchema>;
export type RetryStrategy = z.output<typeof RetryStrategySchema>;

/**
 * The sources of an Application, as Argo CD's GetSources: `sources` when it has any, else `source`
 * (the api refuses both at once, see validate.ts).
 */
export function applicationSources(app: Application): ApplicationSource[] {
  const sources = app.spec.sources ?? [];
  if (sources.length > 0) return sources;
  return app.spec.source ? [app.spec.source] : [];
}

/** Argo CD's HasMultipleSources: `spec.sources` is set (even with one element). */
export function hasMultipleSources(app: Application): boolean {
  return (app.spec.sources?.length ?? 0) > 0;
}

/** A target cluster as the policy needs it: never its credentials. */
export interface ClusterRef {
  readonly name: string;
  readonly server: string;
  /** Argo CD's project-scoped clusters. */
  readonly project?: string;
}
