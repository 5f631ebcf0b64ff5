// Who may call the api's internal ApplicationSet services: only the appset service (its service
// token on a connection with its own client certificate, checked by the Authenticator), and for
// everything that reads or writes on someone's behalf only with a delegation the api minted: for a
// user (a request the api forwarded) or for a set's recorded owner (background reconciles; the
// delegation names the set, and only that set may be acted on). Refusals are audited.
import { PermissionDeniedError } from '@capstan/service';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';
import type { SetRef } from './ownership.js';
import { APPSET_SERVICE } from './appset-client.js';

const HOLDER = `service:${APPSET_SERVICE}`;

async function refuse(
  authz: Authorizer,
  ctx: RequestContext,
  object: string,
  reason: string,
): Promise<never> {
  await authz.record(ctx.principal, 'internal', 'call', object, ctx.via, { allowed: false, reason });
  throw new PermissionDeniedError(`permission denied: ${reason}`);
}

/** The caller is the appset service acting for a user (or, for `set`, as that set's owner). */
export async function requireAppsetDelegation(
  authz: Authorizer,
  ctx: RequestContext,
  operation: string,
  set?: SetRef,
): Promise<void> {
  const p = ctx.principal;
  if (p.kind !== 'user' || p.via !== HOLDER || !p.delegation)
    await refuse(authz, ctx, operation, `${operation} is for the appset service acting with a delegation`);
  if (p.delegation!.kind === 'owner') {
    const resource = p.delegation!.resource ?? '';
    const allowed = set
      ? resource === `applicationsets/${set.namespace}/${set.name}`
      : resource.startsWith('applicationsets/');
    if (!allowed)
      await refuse(authz, ctx, operation, `an owner delegation for ${resource} does not cover this set`);
  }
}

/** The caller is the appset service itself, with no one's delegation (issuing owner delegations). */
export async function requireAppsetService(
  authz: Authorizer,
  ctx: RequestContext,
  operation: string,
): Promise<void> {
  const p = ctx.principal;
  if (p.kind !== 'service' || p.name !== HOLDER || p.via)
    await refuse(authz, ctx, operation, `${operation} is for the appset service's own identity`);
}
