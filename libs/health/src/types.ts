// The shapes of @capstan/health's contract (see index.ts).

export type HealthStatusCode = 'Healthy' | 'Progressing' | 'Degraded' | 'Suspended' | 'Missing' | 'Unknown';

export interface HealthStatus {
  status: HealthStatusCode;
  message?: string;
}

/** A live object as the API server returns it (apiVersion, kind, metadata, spec, status, …). */
export type LiveObject = Record<string, unknown> & { apiVersion?: string; kind?: string };

/**
 * One custom health check of argocd-cm: `resource.customizations.health.<group>_<kind>` or an entry
 * `<group>/<kind>: { health.lua: … }` of the `resource.customizations` block. group '' is the core
 * group; group and kind may hold `*` wildcards (the block form only, as in Argo CD).
 */
export interface HealthCustomization {
  group: string;
  kind: string;
  lua: string;
  /** Argo CD's `useOpenLibs`: the script gets Lua's standard libraries (string, math, os, io, …). */
  useOpenLibs?: boolean;
  /** Where the script was configured (an argocd-cm key), named in compile errors. */
  source?: string;
}

/** A built-in rule: the health of one kind, or undefined when it has nothing to say. */
export type HealthRule = (obj: LiveObject) => HealthStatus;

export const HEALTH_CODES: readonly HealthStatusCode[] = [
  'Healthy',
  'Suspended',
  'Progressing',
  'Missing',
  'Degraded',
  'Unknown',
];
