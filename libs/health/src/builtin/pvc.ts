// gitops-engine pkg/health/health_pvc.go.
import { requireVersion } from './gvk.js';
import { str } from '../object.js';
import type { HealthStatus, HealthStatusCode, LiveObject } from '../types.js';

const BY_PHASE: Record<string, HealthStatusCode> = {
  Lost: 'Degraded',
  Pending: 'Progressing',
  Bound: 'Healthy',
};

export function pvcHealth(obj: LiveObject): HealthStatus {
  requireVersion(obj, 'PersistentVolumeClaim', ['v1']);
  return { status: BY_PHASE[str(obj, 'status', 'phase')] ?? 'Unknown' };
}
