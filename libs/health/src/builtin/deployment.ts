// gitops-engine pkg/health/health_deployment.go (itself kubectl's rollout status).
import { condition, requireVersion } from './gvk.js';
import { field, generation, list, nameOf, num, optNum, quote, str } from '../object.js';
import type { HealthStatus, LiveObject } from '../types.js';

export function deploymentHealth(obj: LiveObject): HealthStatus {
  requireVersion(obj, 'Deployment', ['v1']);
  if (field(obj, 'spec', 'paused') === true) return { status: 'Suspended', message: 'Deployment is paused' };
  if (generation(obj) > num(obj, 'status', 'observedGeneration'))
    return {
      status: 'Progressing',
      message: 'Waiting for rollout to finish: observed deployment generation less than desired generation',
    };
  const progressing = condition(list(obj, 'status', 'conditions'), 'Progressing');
  const replicas = optNum(obj, 'spec', 'replicas');
  const updated = num(obj, 'status', 'updatedReplicas');
  const current = num(obj, 'status', 'replicas');
  const available = num(obj, 'status', 'availableReplicas');
  if (progressing && str(progressing, 'reason') === 'ProgressDeadlineExceeded')
    return { status: 'Degraded', message: `Deployment ${quote(nameOf(obj))} exceeded its progress deadline` };
  if (replicas !== undefined && updated < replicas)
    return {
      status: 'Progressing',
      message: `Waiting for rollout to finish: ${updated} out of ${replicas} new replicas have been updated...`,
    };
  if (current > updated)
    return {
      status: 'Progressing',
      message: `Waiting for rollout to finish: ${current - updated} old replicas are pending termination...`,
    };
  if (available < updated)
    return {
      status: 'Progressing',
      message: `Waiting for rollout to finish: ${available} of ${updated} updated replicas are available...`,
    };
  return { status: 'Healthy' };
}
