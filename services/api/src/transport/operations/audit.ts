import { z } from 'zod';
import { apiv1 } from '@capstan/proto';
import { int, implement, op, str } from '../operation.js';

export const auditOperations = implement<apiv1.AuditServiceServer>(apiv1.AuditServiceService, {
  query: op({
    http: { method: 'GET', path: '/api/v1/audit/:table' },
    auth: 'user',
    summary: 'audit rows, newest first, filtered by application, project, user, time range and outcome',
    input: z.strictObject({
      table: z.string().min(1, 'required'),
      application: str,
      project: str,
      user: str,
      since: str,
      until: str,
      outcome: str,
      limit: int,
      pageToken: str,
    }),
    request: apiv1.AuditQuery,
    response: apiv1.AuditRows,
    run: async (s, ctx, i) => s.audit.query(ctx, i),
  }),
  verify: op({
    http: { method: 'POST', path: '/api/v1/audit/verify' },
    auth: 'user',
    summary: 'recompute the hash chain of one audit table (or all)',
    input: z.strictObject({ table: str }),
    request: apiv1.AuditVerifyRequest,
    response: apiv1.AuditVerifyResponse,
    run: async (s, ctx, i) => ({ tables: await s.audit.verify(ctx, i.table) }),
  }),
});
