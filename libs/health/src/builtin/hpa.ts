// gitops-engine pkg/health/health_hpa.go as vendored in argo-cd: autoscaling/v1 reads the conditions
// from the autoscaling.alpha.kubernetes.io/conditions annotation, v2 from status.conditions.
import { requireVersion } from './gvk.js';
import { annotation, list, str } from '../object.js';
import type { HealthStatus, LiveObject } from '../types.js';

interface HpaCondition {
  type: string;
  reason: string;
  message: string;
  status: string;
}

const WAITING: HealthStatus = { status: 'Progressing', message: 'Waiting to Autoscale' };

const DEGRADED: readonly [string, string][] = [
  ['AbleToScale', 'FailedGetScale'],
  ['AbleToScale', 'FailedUpdateScale'],
  ['ScalingActive', 'FailedGetResourceMetric'],
  ['ScalingActive', 'FailedGetObjectMetric'],
  ['ScalingActive', 'FailedGetPodsMetric'],
  ['ScalingActive', 'FailedGetExternalMetric'],
  ['ScalingActive', 'FailedComputeMetricsReplicas'],
  ['ScalingActive', 'InvalidSelector'],
];

function checkConditions(conditions: HpaCondition[]): HealthStatus {
  const degraded = conditions.find((c) => DEGRADED.some(([t, r]) => c.type === t && c.reason === r));
  if (degraded) return { status: 'Degraded', message: degraded.message };
  const healthy = conditions.find(
    (c) => (c.type === 'AbleToScale' || c.type === 'ScalingLimited') && c.status === 'True',
  );
  if (healthy) return { status: 'Healthy', message: healthy.message };
  return WAITING;
}

const asCondition = (c: Record<string, unknown>): HpaCondition => ({
  type: str(c, 'type'),
  reason: str(c, 'reason'),
  message: str(c, 'message'),
  status: str(c, 'status'),
});

export function hpaHealth(obj: LiveObject): HealthStatus {
  const version = requireVersion(obj, 'HPA', ['v1', 'v2']);
  if (version === 'v2') return checkConditions(list(obj, 'status', 'conditions').map(asCondition));
  const raw = annotation(obj, 'autoscaling.alpha.kubernetes.io/conditions');
  if (raw === undefined) return WAITING;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new Error(`failed to convert conditions annotation to typed: ${(err as Error).message}`);
  }
  const conditions = Array.isArray(parsed)
    ? parsed.filter((c) => c !== null && typeof c === 'object').map(asCondition)
    : [];
  return conditions.length === 0 ? WAITING : checkConditions(conditions);
}
