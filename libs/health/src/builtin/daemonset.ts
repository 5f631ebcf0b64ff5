// gitops-engine pkg/health/health_daemonset.go (kubectl's rollout status for DaemonSets).
import { requireVersion } from './gvk.js';
import { generation, nameOf, num, quote, str } from '../object.js';
import type { HealthStatus, LiveObject } from '../types.js';

export function daemonSetHealth(obj: LiveObject): HealthStatus {
  requireVersion(obj, 'DaemonSet', ['v1']);
  if (generation(obj) > num(obj, 'status', 'observedGeneration'))
    return {
      status: 'Progressing',
      message: 'Waiting for rollout to finish: observed daemon set generation less than desired generation',
    };
  const updated = num(obj, 'status', 'updatedNumberScheduled');
  const desired = num(obj, 'status', 'desiredNumberScheduled');
  const available = num(obj, 'status', 'numberAvailable');
  if (str(obj, 'spec', 'updateStrategy', 'type') === 'OnDelete')
    return {
      status: 'Healthy',
      message: `daemon set ${updated} out of ${desired} new pods have been updated`,
    };
  const name = quote(nameOf(obj));
  if (updated < desired)
    return {
      status: 'Progressing',
      message: `Waiting for daemon set ${name} rollout to finish: ${updated} out of ${desired} new pods have been updated...`,
    };
  if (available < desired)
    return {
      status: 'Progressing',
      message: `Waiting for daemon set ${name} rollout to finish: ${available} of ${desired} updated pods are available...`,
    };
  return { status: 'Healthy' };
}
