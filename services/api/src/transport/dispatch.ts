// What every call goes through, whichever transport brought it: authenticate (a refusal is
// audited), validate the input against the operation's schema (field paths), run.
import { UnauthenticatedError, PermissionDeniedError } from '@capstan/service';
import type { ApiServices } from '../services.js';
import type { Via } from '../rbac/authorizer.js';
import type { CallCredentials } from '../auth/authenticator.js';
import type { RequestContext } from '../support/request.js';
import { parseOrThrow } from '../support/validation.js';
import type { Operation } from './operation.js';

export interface CallMeta {
  authorization: string | undefined;
  call: CallCredentials;
  correlationId: string | undefined;
  via: Via;
}

const ANONYMOUS = { name: 'anonymous', groups: [], kind: 'user' as const };

export async function dispatch(
  services: ApiServices,
  op: Operation,
  raw: unknown,
  meta: CallMeta,
): Promise<unknown> {
  let ctx: RequestContext = { principal: ANONYMOUS, via: meta.via, correlationId: meta.correlationId };
  if (op.auth !== 'public') {
    try {
      ctx = { ...ctx, principal: await services.authn.authenticate(meta.authorization, meta.call) };
    } catch (err) {
      if (err instanceof UnauthenticatedError || err instanceof PermissionDeniedError) {
        await services.authz.record({ name: 'anonymous' }, 'api', op.name, '-', meta.via, {
          allowed: false,
          reason: err.message,
        });
      }
      throw err;
    }
  }
  const input = parseOrThrow(op.input, raw ?? {});
  return op.run(services, ctx, input);
}
