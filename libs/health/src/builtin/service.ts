// gitops-engine pkg/health/health_service.go and health_ingress.go.
import { requireVersion } from './gvk.js';
import { field, str } from '../object.js';
import type { HealthStatus, LiveObject } from '../types.js';

const hasIngress = (obj: LiveObject): boolean => {
  const ingress = field(obj, 'status', 'loadBalancer', 'ingress');
  return Array.isArray(ingress) && ingress.length > 0;
};

/** A LoadBalancer Service waits for its address; any other Service is Healthy. */
export function serviceHealth(obj: LiveObject): HealthStatus {
  requireVersion(obj, 'Service', ['v1']);
  if (str(obj, 'spec', 'type') === 'LoadBalancer')
    return { status: hasIngress(obj) ? 'Healthy' : 'Progressing' };
  return { status: 'Healthy' };
}

/** Every version of Ingress: Healthy once the controller published an address. */
export function ingressHealth(obj: LiveObject): HealthStatus {
  return { status: hasIngress(obj) ? 'Healthy' : 'Progressing' };
}
