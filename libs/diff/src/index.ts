// @capstan/diff: is a live object what git declares? (pure apart from jq's bounded worker). Argo
// CD's comparison: normalised desired vs live, ignoreDifferences, compare-options annotation,
// managed fields, Secret masking, and `argocd app diff`'s rendering.
// CONTRACT (the reconciler and `capstan app diff` code against it): compileIgnoreDifferences once
// per Application (it compiles jq), then compareResource per object, synchronously.

export type { KubeObjectLike } from './types.js';
export {
  compileIgnoreDifferences,
  entryMatches,
  type CompileIgnoreOptions,
  type IgnoreDifference,
  type IgnoreRules,
} from './ignore.js';
export { compareResource, type CompareOptions, type ResourceComparison } from './compare.js';
export {
  compareOptionsOf,
  COMPARE_OPTIONS_ANNOTATION,
  type ResourceCompareOptions,
} from './compare-options.js';
export { hideSecretData } from './mask.js';
export { renderDiff, diffHeader, toYaml, type RenderOptions } from './render.js';
export { parseQuantity } from './canonical.js';
export { JqError, DEFAULT_JQ_TIMEOUT_MS } from './jq.js';
export { systemIgnoreDifferencesFromArgoCdCm } from './system-ignore.js';
