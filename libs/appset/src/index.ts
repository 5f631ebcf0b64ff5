// @capstan/appset-engine: Argo CD ApplicationSets as a pure library (no I/O but the injected
// providers): the manifest schema, the generators, Go text/template + sprig rendering in an
// in-process WebAssembly module, bounds, and validation of every generated Application.
export {
  ApplicationSetSchema,
  ApplicationSetSpecSchema,
  GeneratorSchema,
  LabelSelectorSchema,
  TemplateSchema,
  SUPPORTED_GENERATORS,
  UNSUPPORTED_GENERATORS,
  MATRIX_TOO_MANY,
  MATRIX_TOO_FEW,
  MERGE_TOO_FEW,
  MERGE_NO_KEYS,
  type ApplicationSet,
  type ApplicationSetSpec,
  type GeneratorSpec,
  type LabelSelector,
  type Template,
} from './manifest/schema.js';
export {
  AppSetEngine,
  DEFAULT_LIMITS,
  parseApplicationSet,
  type EngineOptions,
  type GenerateRequest,
  type GenerateResult,
  type Limits,
} from './engine/engine.js';
export { AppSetError, type AppSetErrorReason } from './engine/errors.js';
export { engineIdentity } from './engine/identity.js';
export { generatorInputs, type GeneratorInputs } from './engine/inputs.js';
export { selectorMatches } from './engine/selector.js';
export { IN_CLUSTER_SERVER } from './engine/generators.js';
export type {
  ClusterInfo,
  ClusterProvider,
  GitListRequest,
  GitProvider,
  PathPattern,
  Providers,
} from './engine/providers.js';
export {
  GoTemplateModule,
  TemplateModuleError,
  TemplateTimeoutError,
  defaultModuleDir,
  type GoTemplateModuleOptions,
} from './gotemplate/runtime.js';
