// What every call goes through, whichever transport brought it: bound the input (no NUL or lone
// surrogate in any string, depth, lengths: refused before anything reaches the database, even for
// the unauthenticated login), authenticate (a refusal is audited), validate the input against the
// operation's schema (field paths), run.
import { UnauthenticatedError, PermissionDeniedError, ValidationError } from '@capstan/service';
import { inputLimitIssues } from '@capstan/policy';
import type { ApiServices } from '../services.js';
import type { Via } from '../rbac/authorizer.js';
import type { CallCredentials } from '../auth/authenticator.js';
import type { RequestContext } from '../support/request.js';
import { parseOrThrow, violationsOf } from '../support/validation.js';
import type { Operation } from './operation.js';

export interface CallMeta {
  authorization: string | undefined;
  call: CallCredentials;
  correlationId: string | undefined;
  /** The caller's address without port. */
  peer: string | undefined;
  via: Via;
}

const ANONYMOUS = { name: 'anonymous', groups: [], kind: 'user' as const };

export async function dispatch(
  services: ApiServices,
  op: Operation,
  raw: unknown,
  meta: CallMeta,
): Promise<unknown> {
  const bounded = inputLimitIssues(raw, services.inputLimits, op.largeStrings);
  if (bounded.length > 0) throw new ValidationError(violationsOf(bounded));
  const ctx: RequestContext =
    op.auth === 'public'
      ? { principal: ANONYMOUS, via: meta.via, correlationId: meta.correlationId, peer: meta.peer }
      : await authenticatedContext(services, op.name, meta);
  const input = parseOrThrow(op.input, raw ?? {});
  return op.run(services, ctx, input);
}

/** The caller of a call that needs one; a refusal is audited under the operation's name. */
export async function authenticatedContext(
  services: ApiServices,
  opName: string,
  meta: CallMeta,
): Promise<RequestContext> {
  try {
    const principal = await services.authn.authenticate(meta.authorization, meta.call);
    return { principal, via: meta.via, correlationId: meta.correlationId, peer: meta.peer };
  } catch (err) {
    if (err instanceof UnauthenticatedError || err instanceof PermissionDeniedError) {
      await services.authz.record({ name: 'anonymous' }, 'api', opName, '-', meta.via, {
        allowed: false,
        reason: err.message,
      });
    }
    throw err;
  }
}
