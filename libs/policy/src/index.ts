// @capstan/policy: the shared domain rules (no I/O) that must give the same answer in the api,
// the sync service and the CLI: Argo CD manifests, the project chain, ServiceAccount
// resolution and the full sync decision.
export { canonicalJson, sameJson, canonicalDigest } from './canonical/canonical-json.js';
export { ManifestError, formatIssue, formatIssues, formatPath, type PolicyIssue } from './issues.js';
export * from './manifests/schemas.js';
export * from './manifests/source-options.js';
export {
  sourceOptionIssues,
  sourceFileProblem,
  refFileProblem,
  REF_NAME,
  type RefContext,
  helmSourceIssues,
  kustomizeSourceIssues,
  directorySourceIssues,
  helmValuesText,
} from './manifests/source-option-issues.js';
export {
  chartRepoKind,
  chartRepoUrl,
  chartSourceIssues,
  chartVersionConstraint,
  isExactChartVersion,
  type ChartRepoKind,
} from './manifests/chart-source.js';
export {
  parseArgoManifests,
  decodeArgoObject,
  issuesFromZod,
  ManifestErrors,
  type ArgoManifests,
} from './manifests/parse.js';
export { compileProject, type CompiledProject, type CompiledServiceAccountRule } from './project/compile.js';
export {
  ProjectChain,
  MAX_CHAIN_DEPTH,
  type ProjectLookup,
  type ChainResolution,
  type ChainCheck,
  type ChainErrorCode,
} from './project/chain.js';
export {
  normalizeRepoUrl,
  sameRepoUrl,
  isSshUrl,
  redactRepoUrl,
  repoUrlProblem,
  repoEndpoint,
  type RepoEndpoint,
  type RepoUrlOptions,
} from './repository/repo-url.js';
export { repoPathProblem } from './repository/repo-path.js';
export {
  findForMutation,
  resolveForApi,
  selectForProject,
  type ApiResolution,
  type Candidate,
  type LookupDecision,
  type LookupReason,
} from './repository/credential-selection.js';
export {
  validateAppProject,
  validateApplication,
  appProjectIssues,
  applicationIssues,
  applicationSourceIssues,
  type Validation,
} from './project/validate.js';
export {
  parseServiceAccountRef,
  serviceAccountUsername,
  dnsLabelProblem,
  dnsSubdomainProblem,
  SERVICE_ACCOUNT_DISALLOWED_CHARS,
  type ServiceAccountRef,
} from './serviceaccount/names.js';
export {
  resolveServiceAccount,
  firstMatchingRule,
  type ServiceAccount,
  type ServiceAccountRequest,
  type ServiceAccountResolution,
  type ResolutionRefusal,
  type ResolveOptions,
  type Fallback,
} from './serviceaccount/resolve.js';
export { ClusterDirectory, IN_CLUSTER, type ResolvedDestination } from './sync/destination.js';
export { projectBoundIssues } from './project/bounds.js';
export {
  effectiveRestrictions,
  type EffectiveEntry,
  type EffectiveRestrictions,
  type EffectiveResolution,
} from './project/effective.js';
export {
  syncWindowsVerdict,
  windowActive,
  windowApplies,
  parseGoDuration,
  type WindowTarget,
  type ActiveWindow,
  type WindowVerdict,
} from './project/sync-windows.js';
export { checkDeliveredProjects, type DeliveredProjectCheck } from './sync/delivered-projects.js';
export { explainSync } from './sync/explain.js';
export type {
  ExplainSyncInput,
  SyncDecision,
  DecisionCheck,
  RuleEvaluation,
  CheckName,
} from './sync/decision.js';
export {
  readYamlDocuments,
  DEFAULT_YAML_LIMITS,
  type YamlLimits,
  type YamlDocument,
} from './manifests/yaml.js';
export { inputLimitIssues, textProblem, DEFAULT_INPUT_LIMITS, type InputLimits } from './input/limits.js';
export {
  TRACKING_ANNOTATION,
  trackingAppName,
  trackingId,
  trackedBy,
  type AppRef,
  type TrackedObject,
} from './tracking/tracking-id.js';
export * from './settings/index.js';
export * from './notifications/index.js';
