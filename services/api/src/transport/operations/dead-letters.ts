import { z } from 'zod';
import { apiv1 } from '@capstan/proto';
import { implement, int, op, str } from '../operation.js';

export const deadLetterOperations = implement<apiv1.DeadLetterServiceServer>(apiv1.DeadLetterServiceService, {
  list: op({
    http: { method: 'GET', path: '/api/v1/deadletters' },
    auth: 'user',
    summary: "dead letters of every service's bus consumers, newest first (admins only)",
    input: z.strictObject({ service: str, consumer: str, limit: int, pageToken: str }),
    request: apiv1.DeadLetterQuery,
    response: apiv1.DeadLetterList,
    run: async (s, ctx, i) => s.deadLetters.list(ctx, i),
  }),
  replay: op({
    http: { method: 'POST', path: '/api/v1/deadletters/:id/replay' },
    auth: 'user',
    summary: 'hand one dead letter to its consumer again, in the service that owns it (admins only)',
    input: z.strictObject({ id: z.string().min(1, 'required').max(64) }),
    request: apiv1.DeadLetterReplayRequest,
    response: apiv1.DeadLetterReplayResponse,
    run: async (s, ctx, i) => s.deadLetters.replay(ctx, i.id),
  }),
});
