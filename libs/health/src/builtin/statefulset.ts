// gitops-engine pkg/health/health_statefulset.go (kubectl's rollout status for StatefulSets).
import { requireVersion } from './gvk.js';
import { generation, num, optNum, str } from '../object.js';
import type { HealthStatus, LiveObject } from '../types.js';

export function statefulSetHealth(obj: LiveObject): HealthStatus {
  requireVersion(obj, 'StatefulSet', ['v1']);
  const observed = num(obj, 'status', 'observedGeneration');
  if (observed === 0 || generation(obj) > observed)
    return { status: 'Progressing', message: 'Waiting for statefulset spec update to be observed...' };
  const replicas = optNum(obj, 'spec', 'replicas');
  const ready = num(obj, 'status', 'readyReplicas');
  const updated = num(obj, 'status', 'updatedReplicas');
  if (replicas !== undefined && ready < replicas)
    return { status: 'Progressing', message: `Waiting for ${replicas - ready} pods to be ready...` };
  const strategy = str(obj, 'spec', 'updateStrategy', 'type');
  const rollingUpdate = (obj.spec as { updateStrategy?: { rollingUpdate?: unknown } } | undefined)
    ?.updateStrategy?.rollingUpdate;
  if (strategy === 'RollingUpdate' && rollingUpdate !== undefined && rollingUpdate !== null) {
    const partition = optNum(rollingUpdate, 'partition');
    if (replicas !== undefined && partition !== undefined && updated < replicas - partition)
      return {
        status: 'Progressing',
        message: `Waiting for partitioned roll out to finish: ${updated} out of ${replicas - partition} new pods have been updated...`,
      };
    return {
      status: 'Healthy',
      message: `partitioned roll out complete: ${updated} new pods have been updated...`,
    };
  }
  if (strategy === 'OnDelete') return { status: 'Healthy', message: `statefulset has ${ready} ready pods` };
  const updateRevision = str(obj, 'status', 'updateRevision');
  const currentRevision = str(obj, 'status', 'currentRevision');
  if (updateRevision !== currentRevision)
    return {
      status: 'Progressing',
      message: `waiting for statefulset rolling update to complete ${updated} pods at revision ${updateRevision}...`,
    };
  return {
    status: 'Healthy',
    message: `statefulset rolling update complete ${num(obj, 'status', 'currentReplicas')} pods at revision ${currentRevision}...`,
  };
}
