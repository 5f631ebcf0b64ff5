// Argo kinds: Workflow (gitops-engine pkg/health/health_argo.go) and Application. Argo CD removed
// the Application's built-in health in 1.8 and documents a resource customization to restore it
// for app-of-apps with sync waves (operator-manual/health.md "Argocd App"); Capstan ships that
// documented rule as built-in, since waves over child Applications are the common case.
import { field, str } from '../object.js';
import type { HealthStatus, HealthStatusCode, LiveObject } from '../types.js';

const WORKFLOW: Record<string, HealthStatusCode> = {
  '': 'Progressing',
  Pending: 'Progressing',
  Running: 'Progressing',
  Succeeded: 'Healthy',
  Failed: 'Degraded',
  Error: 'Degraded',
};

export function workflowHealth(obj: LiveObject): HealthStatus {
  const message = str(obj, 'status', 'message');
  return { status: WORKFLOW[str(obj, 'status', 'phase')] ?? 'Unknown', message };
}

const CODES = new Set(['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown']);

export function applicationHealth(obj: LiveObject): HealthStatus {
  const health = field(obj, 'status', 'health');
  if (health === undefined || health === null) return { status: 'Progressing', message: '' };
  const status = str(health, 'status');
  // The documented Lua passes any string through; Argo then maps an invalid one to Unknown.
  if (!CODES.has(status)) return { status: 'Unknown', message: 'Lua returned an invalid health status' };
  return { status: status as HealthStatusCode, message: str(health, 'message') };
}
