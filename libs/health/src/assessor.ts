// The assessor: Argo CD's GetResourceHealth order. An object being deleted is Progressing "Pending
// deletion" (unless it is a hook holding Argo's hook finalizer); a configured custom check of its
// group/kind (exact key first, then wildcard keys in configuration order) overrides the built-in
// rule; then the built-in rule; kinds with neither have no health (undefined).
import { compileGlob, GlobSyntaxError, type Glob } from '@capstan/glob';
import { builtinRule } from './builtin/index.js';
import { UnsupportedVersionError } from './builtin/gvk.js';
import { createLuaChecks, HealthCheckCompileError, type CompiledCheck } from './lua/checks.js';
import type { LuaLimits } from './lua/vm.js';
import { field, groupVersionOf } from './object.js';
import type { HealthCustomization, HealthStatus, LiveObject } from './types.js';

export interface HealthAssessor {
  /**
   * The object's health; `undefined` for a kind with no health rule (Argo CD leaves such resources
   * out of the Application's health). A missing object is `{ status: 'Missing' }`.
   */
  assess(obj: LiveObject | undefined): HealthStatus | undefined;
}

export interface HealthAssessorOptions {
  customizations?: readonly HealthCustomization[];
  /** Bounds of one custom check run (defaults: DEFAULT_LUA_LIMITS). */
  luaLimits?: LuaLimits;
}

export const HOOK_FINALIZER = 'argocd.argoproj.io/hook-finalizer';

/** Argo CD's override key: "group/Kind", or "Kind" for the core group (util/lua GetConfigMapKey). */
export const overrideKey = (group: string, kind: string): string => (group ? `${group}/${kind}` : kind);

export async function createHealthAssessor(options: HealthAssessorOptions = {}): Promise<HealthAssessor> {
  const customizations = options.customizations ?? [];
  const lua =
    customizations.length > 0 ? await createLuaChecks(customizations, options.luaLimits) : undefined;
  const exact = new Map<string, CompiledCheck>();
  const wildcards: { glob: Glob; check: CompiledCheck }[] = [];
  for (const c of customizations) {
    const key = overrideKey(c.group, c.kind);
    const check = lua!.compile(c);
    // Later entries of one key win, as later keys of argocd-cm override the block's.
    exact.set(key, check);
    // Argo then tries every key as a glob (util/lua getWildcardHealthOverrideLua).
    let glob: Glob;
    try {
      glob = compileGlob(key);
    } catch (err) {
      if (err instanceof GlobSyntaxError) throw new HealthCheckCompileError(c.source ?? key, err.message);
      throw err;
    }
    wildcards.push({ glob, check });
  }
  const customFor = (key: string): CompiledCheck | undefined =>
    exact.get(key) ?? wildcards.find((w) => w.glob.match(key))?.check;

  return {
    assess(obj) {
      if (obj === undefined) return { status: 'Missing' };
      const deleting = field(obj, 'metadata', 'deletionTimestamp');
      const finalizers = field(obj, 'metadata', 'finalizers');
      if (
        deleting !== undefined &&
        deleting !== null &&
        !(Array.isArray(finalizers) && finalizers.includes(HOOK_FINALIZER))
      )
        return { status: 'Progressing', message: 'Pending deletion' };
      const { group } = groupVersionOf(obj);
      const kind = typeof obj.kind === 'string' ? obj.kind : '';
      const custom = customFor(overrideKey(group, kind));
      if (custom) return custom.run(obj);
      const rule = builtinRule(group, kind);
      if (!rule) return undefined;
      try {
        const health = rule(obj);
        return health.message ? health : { status: health.status };
      } catch (err) {
        if (err instanceof UnsupportedVersionError) return { status: 'Unknown', message: err.message };
        return { status: 'Unknown', message: (err as Error).message };
      }
    },
  };
}
