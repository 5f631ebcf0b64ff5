import { z } from 'zod';
import { apiv1 } from '@capstan/proto';
import { bool, implement, op } from '../operation.js';

export const applyOperations = implement<apiv1.ApplyServiceServer>(apiv1.ApplyServiceService, {
  apply: op({
    http: { method: 'POST', path: '/api/v1/apply' },
    auth: 'user',
    summary:
      'apply Argo CD manifests (AppProject, Application, repository and cluster Secrets); all or nothing on bad input',
    largeStrings: new Set(['manifests']),
    input: z.strictObject({ manifests: z.string().min(1, 'required'), dryRun: bool, strict: bool }),
    request: apiv1.ApplyRequest,
    response: apiv1.ApplyResponse,
    run: async (s, ctx, i) => ({
      results: await s.apply.apply(ctx, i.manifests, { dryRun: i.dryRun, strict: i.strict }),
    }),
  }),
});
