// DelegationService for the appset service's background work: the owner of a set is the user who
// last created or updated it through the api (recorded while appset acts with that user's
// delegation: a service cannot name an owner), and an owner delegation is issued only for that
// recorded owner, only while the account is enabled; whatever it is used for is then decided with
// the owner's rights of today. Every decision is audited.
import { PermissionDeniedError } from '@capstan/service';
import { invalid } from '../support/validation.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { Delegations } from '../auth/delegations.js';
import type { RequestContext } from '../support/request.js';
import { requireAppsetDelegation, requireAppsetService } from './appset-caller.js';
import { delivererRef } from '../delivery/deliverer-rights.js';
import { APPSET_SERVICE } from './appset-client.js';
import { parseSetRef } from './ownership.js';
import type { OwnerStanding } from '../sso/sso-subjects.js';

const AUDIENCES = new Set(['api', 'repo']);
const PREFIX = 'applicationsets/';

/** A set's resource name, `applicationsets/<namespace>/<name>`, validated. */
function setResource(resource: string): string {
  if (!resource.startsWith(PREFIX)) throw invalid('resource', 'must be applicationsets/<namespace>/<name>');
  parseSetRef(resource.slice(PREFIX.length), 'resource');
  return resource;
}

export class SetOwnersService {
  constructor(
    private readonly deps: {
      authz: Authorizer;
      authn: Authenticator;
      delegations: Delegations;
      /** A single sign-on owner's standing (sso/sso-subjects.ts ownerStanding, with its bound). */
      ssoOwner: (subject: string) => Promise<OwnerStanding>;
    },
  ) {}

  async recordOwner(ctx: RequestContext, resource: string): Promise<{ owner: string }> {
    const set = parseSetRef(setResource(resource).slice(PREFIX.length), 'resource');
    await requireAppsetDelegation(this.deps.authz, ctx, 'DelegationService.RecordOwner', set);
    if (ctx.principal.delegation?.kind !== 'user')
      throw new PermissionDeniedError('an owner is recorded only for a user acting through a delegation');
    await this.deps.delegations.recordOwner(ctx.principal, resource);
    await this.deps.authz.record(ctx.principal, 'delegations', 'record-owner', resource, ctx.via, {
      allowed: true,
      reason: `recorded ${ctx.principal.name} as the owner`,
    });
    return { owner: ctx.principal.name };
  }

  async issueOwnerDelegation(
    ctx: RequestContext,
    resource: string,
    audience: string,
  ): Promise<{ delegation: string; owner: string }> {
    setResource(resource);
    if (!AUDIENCES.has(audience)) throw invalid('audience', 'must be api or repo');
    await requireAppsetService(this.deps.authz, ctx, 'DelegationService.IssueOwnerDelegation');
    const deny = async (reason: string): Promise<never> => {
      await this.deps.authz.record(ctx.principal, 'delegations', 'issue-owner', resource, ctx.via, {
        allowed: false,
        reason,
      });
      throw new PermissionDeniedError(`permission denied: ${reason}`);
    };
    let issued: Awaited<ReturnType<Delegations['forOwner']>>;
    try {
      issued = await this.deps.delegations.forOwner(APPSET_SERVICE, resource, audience, this.deps.ssoOwner);
    } catch (err) {
      if (err instanceof PermissionDeniedError)
        return deny(
          `the owner of ${resource} cannot act: ${err.message.replace(/^permission denied: /, '')}`,
        );
      throw err;
    }
    // The owner is an account, a single sign-on user in good standing (the delegation carries its
    // groups as last verified: never a local account's name), or an Application that delivered the
    // set from git (checked, with its project's grants of today, when the delegation is presented).
    const deliverer = delivererRef(issued.owner);
    const account = deliverer ? undefined : await this.deps.authn.account(issued.owner);
    if (issued.sso && account)
      return deny(`the single sign-on owner ${issued.owner} of ${resource} is now a local account's name`);
    if (!deliverer && !issued.sso && !account?.enabled)
      return deny(`the owner ${issued.owner} of ${resource} does not exist or is disabled`);
    const verified = issued.sso
      ? `, single sign-on groups verified ${issued.sso.verifiedAt.toISOString()}`
      : '';
    await this.deps.authz.record(ctx.principal, 'delegations', 'issue-owner', resource, ctx.via, {
      allowed: true,
      reason: `owner ${issued.owner}, audience ${audience}${verified}`,
    });
    return { delegation: issued.token, owner: issued.owner };
  }
}
