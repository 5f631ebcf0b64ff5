// argo-cd resource_customizations/batch/CronJob/health.lua, ported (same statuses and messages).
// Timestamps compare as strings there too (RFC 3339 in UTC sorts chronologically).
import { field, str } from '../object.js';
import type { HealthStatus, LiveObject } from '../types.js';

export function cronJobHealth(obj: LiveObject): HealthStatus {
  if (field(obj, 'spec', 'suspend') === true)
    // Argo reports Healthy, not Suspended, until argoproj/argo-cd#24428 is resolved.
    return { status: 'Healthy', message: 'CronJob is Suspended' };
  const status = field(obj, 'status');
  if (status === undefined || status === null)
    return { status: 'Progressing', message: 'Waiting for CronJob' };
  const lastSchedule = field(status, 'lastScheduleTime');
  if (lastSchedule === undefined || lastSchedule === null)
    return { status: 'Healthy', message: 'CronJob has not been scheduled yet' };
  const lastSuccess = field(status, 'lastSuccessfulTime');
  if (lastSuccess === undefined || lastSuccess === null)
    return { status: 'Healthy', message: 'The CronJob never completed successfully. It may not be healthy' };
  const active = field(status, 'active');
  if (Array.isArray(active) && active.length > 0)
    return {
      status: 'Healthy',
      message: 'The job is running. Its last execution may not have been successful',
    };
  if (str(status, 'lastSuccessfulTime') < str(status, 'lastScheduleTime'))
    return { status: 'Degraded', message: 'CronJob has not completed its last execution successfully' };
  return { status: 'Healthy', message: 'CronJob has completed its last execution successfully' };
}
