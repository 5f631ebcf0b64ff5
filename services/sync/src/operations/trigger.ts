// What started a sync (libs/events syncTrigger), as sync.started carries it and `capstan app
// history` shows it. The request's own trigger when it has one (the api sets user, bus or rollback;
// the automation sets automated or self-heal); a policy retry (syncPolicy.retry) is a retry; a
// request without one is a user's, the envelope's actor.
import type { z } from 'zod';
import type { syncTrigger } from '@capstan/events';

export type SyncTrigger = z.infer<typeof syncTrigger>;

/** The automation's actor (the reconciler's automated sync and self-heal, retries). */
export const AUTOMATION_ACTOR = 'automation';

export function triggerOf(
  request: { trigger?: SyncTrigger | undefined },
  op: { actor: string; retries: number },
): SyncTrigger {
  if (op.retries > 0) return { kind: 'retry', actor: AUTOMATION_ACTOR };
  return request.trigger ?? { kind: 'user', actor: op.actor };
}
