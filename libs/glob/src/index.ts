// @capstan/glob: the one glob engine of the project (Argo CD's gobwas semantics, linear time).
export {
  compileGlob,
  cachedGlob,
  globMatch,
  GlobSyntaxError,
  MAX_ALTERNATIVES,
  type Glob,
  type GlobOptions,
} from './glob.js';
