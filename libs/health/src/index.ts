// @capstan/health: how healthy a live Kubernetes object is, by Argo CD's rules (pure, no I/O).
// CONTRACT (the reconciler and the sync's wave waits code against it): createHealthAssessor once
// (it compiles custom Lua checks), then assess() per object, synchronously.
export type { HealthStatusCode, HealthStatus, LiveObject, HealthCustomization } from './types.js';
export {
  createHealthAssessor,
  overrideKey,
  HOOK_FINALIZER,
  type HealthAssessor,
  type HealthAssessorOptions,
} from './assessor.js';
export { worstHealth, isWorse } from './order.js';
export { HealthCheckCompileError } from './lua/checks.js';
export { DEFAULT_LUA_LIMITS, type LuaLimits } from './lua/vm.js';
export { healthCustomizationsFromArgoCdCm, HealthConfigError, CUSTOMIZATIONS_KEY } from './config.js';
export { isHook, IGNORE_RESTART_POLICY_ANNOTATION } from './builtin/pod.js';

/** Argo CD: an object with this annotation "true" is left out of its Application's health. */
export const IGNORE_HEALTHCHECK_ANNOTATION = 'argocd.argoproj.io/ignore-healthcheck';

/** Whether the Application's aggregated health skips this object (Argo's ignore-healthcheck). */
export function healthIgnored(obj: { metadata?: unknown } | undefined): boolean {
  const annotations = (obj?.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations;
  return annotations?.[IGNORE_HEALTHCHECK_ANNOTATION] === 'true';
}
