// @capstan/health: how healthy a live Kubernetes object is, by Argo CD's rules (pure, no I/O).
// CONTRACT (the reconciler and the sync's wave waits code against it): createHealthAssessor once
// (it compiles custom Lua checks), then assess() per object, synchronously.
// STUB: every existing object is Healthy until the real rules land.

export type HealthStatusCode = 'Healthy' | 'Progressing' | 'Degraded' | 'Suspended' | 'Missing' | 'Unknown';

export interface HealthStatus {
  status: HealthStatusCode;
  message?: string;
}

/** A live object as the API server returns it (apiVersion, kind, metadata, spec, status, …). */
export type LiveObject = Record<string, unknown> & { apiVersion?: string; kind?: string };

/** argocd-cm `resource.customizations.health.<group_kind>` entries: group ('' core) and kind → Lua source. */
export interface HealthCustomization {
  group: string;
  kind: string;
  lua: string;
}

export interface HealthAssessor {
  /**
   * The object's health; `undefined` for a kind with no health rule (Argo CD leaves such resources
   * out of the Application's health). A missing object is `{ status: 'Missing' }`.
   */
  assess(obj: LiveObject | undefined): HealthStatus | undefined;
}

export async function createHealthAssessor(
  _options: { customizations?: readonly HealthCustomization[] } = {},
): Promise<HealthAssessor> {
  return {
    assess: (obj) => (obj === undefined ? { status: 'Missing' } : { status: 'Healthy' }),
  };
}

const ORDER: HealthStatusCode[] = ['Healthy', 'Suspended', 'Progressing', 'Missing', 'Degraded', 'Unknown'];

/** Argo CD's aggregation: the Application is as healthy as its worst resource (health.IsWorse order). */
export function worstHealth(statuses: readonly HealthStatusCode[]): HealthStatusCode {
  let worst: HealthStatusCode = 'Healthy';
  for (const s of statuses) if (ORDER.indexOf(s) > ORDER.indexOf(worst)) worst = s;
  return worst;
}
