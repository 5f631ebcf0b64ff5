import { HEALTH_CODES, type HealthStatusCode } from './types.js';

// gitops-engine pkg/health healthOrder: most healthy first. An unknown code counts as Healthy
// (index 0), as IsWorse does.
const rank = (code: HealthStatusCode): number => Math.max(0, HEALTH_CODES.indexOf(code));

/** gitops-engine health.IsWorse: whether `next` is a worse condition than `current`. */
export function isWorse(current: HealthStatusCode, next: HealthStatusCode): boolean {
  return rank(next) > rank(current);
}

/** Argo CD's aggregation: the Application is as healthy as its worst resource (health.IsWorse order). */
export function worstHealth(statuses: readonly HealthStatusCode[]): HealthStatusCode {
  let worst: HealthStatusCode = 'Healthy';
  for (const s of statuses) if (isWorse(worst, s)) worst = s;
  return worst;
}
