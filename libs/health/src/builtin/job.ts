// gitops-engine pkg/health/health_job.go as vendored in argo-cd (a suspended Job carries its
// condition's message).
import { requireVersion } from './gvk.js';
import { list, str } from '../object.js';
import type { HealthStatus, LiveObject } from '../types.js';

export function jobHealth(obj: LiveObject): HealthStatus {
  requireVersion(obj, 'Job', ['v1']);
  let failed = false;
  let complete = false;
  let suspended = false;
  let failMessage = '';
  let message = '';
  // Like Go's loop, the last condition of each type wins.
  for (const c of list(obj, 'status', 'conditions')) {
    switch (c.type) {
      case 'Failed':
        failed = true;
        complete = true;
        failMessage = str(c, 'message');
        break;
      case 'Complete':
        complete = true;
        message = str(c, 'message');
        break;
      case 'Suspended':
        complete = true;
        message = str(c, 'message');
        if (c.status === 'True') suspended = true;
        break;
    }
  }
  if (!complete) return { status: 'Progressing', message };
  if (failed) return { status: 'Degraded', message: failMessage };
  if (suspended) return { status: 'Suspended', message };
  return { status: 'Healthy', message };
}
