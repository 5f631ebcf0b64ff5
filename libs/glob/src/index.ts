// @capstan/glob: the one glob engine of the project (Argo CD's gobwas semantics, linear time,
// bounded patterns). RBAC, project patterns and every other tenant-written glob match through it.
export {
  compileGlob,
  cachedGlob,
  globMatch,
  GlobSyntaxError,
  GLOB_LIMITS,
  MAX_ALTERNATIVES,
  type Glob,
  type GlobOptions,
} from './glob.js';
export { globWithin, globLiteral } from './within.js';
