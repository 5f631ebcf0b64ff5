// gitops-engine pkg/health/health_apiservice.go.
import { requireVersion } from './gvk.js';
import { list, str } from '../object.js';
import type { HealthStatus, LiveObject } from '../types.js';

export function apiServiceHealth(obj: LiveObject): HealthStatus {
  requireVersion(obj, 'APIService', ['v1', 'v1beta1']);
  const available = list(obj, 'status', 'conditions').find((c) => c.type === 'Available');
  if (!available) return { status: 'Progressing', message: 'Waiting to be processed' };
  return {
    status: available.status === 'True' ? 'Healthy' : 'Progressing',
    message: `${str(available, 'reason')}: ${str(available, 'message')}`,
  };
}
