// gitops-engine pkg/health/health_replicaset.go.
import { condition, requireVersion } from './gvk.js';
import { generation, list, num, optNum, str } from '../object.js';
import type { HealthStatus, LiveObject } from '../types.js';

export function replicaSetHealth(obj: LiveObject): HealthStatus {
  requireVersion(obj, 'ReplicaSet', ['v1']);
  if (generation(obj) > num(obj, 'status', 'observedGeneration'))
    return {
      status: 'Progressing',
      message: 'Waiting for rollout to finish: observed replica set generation less than desired generation',
    };
  const failure = condition(list(obj, 'status', 'conditions'), 'ReplicaFailure');
  if (failure && failure.status === 'True') return { status: 'Degraded', message: str(failure, 'message') };
  const replicas = optNum(obj, 'spec', 'replicas');
  const available = num(obj, 'status', 'availableReplicas');
  if (replicas !== undefined && available < replicas)
    return {
      status: 'Progressing',
      message: `Waiting for rollout to finish: ${available} out of ${replicas} new replicas are available...`,
    };
  return { status: 'Healthy' };
}
