// The api is the only issuer of delegations (see @capstan/service-identity): it mints one per user
// request it forwards (to repo, to appset), and owner delegations for background work, only for an
// owner it recorded itself when that user created or updated the resource through a delegation.
// It also verifies the delegations other services present to it (audience `api`).
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { Kysely } from 'kysely';
import { PermissionDeniedError, ValidationError, type Logger } from '@capstan/service';
import {
  DelegationIssuer,
  DelegationVerifier,
  delegationPrivateKey,
  delegationPublicKeys,
} from '@capstan/service-identity';
import type { Keyring } from '@capstan/sealing';
import type { ApiDatabase } from '../support/db.table.js';
import { loadSealedKey } from './signing-key.js';
import type { Principal } from './principal.js';
import type { OwnerStanding } from '../sso/sso-subjects.js';

export const API_SERVICE = 'api';
const RESOURCE = /^[a-z][a-z0-9-]*\/[A-Za-z0-9._-]{1,253}\/[A-Za-z0-9._-]{1,253}$/;

/** The configured key (PEM), else the one generated on first start and kept sealed. */
export async function loadDelegationKey(
  db: Kysely<ApiDatabase>,
  keyring: Keyring,
  configured: string,
): Promise<{ key: KeyObject; generated: boolean }> {
  if (configured) return { key: delegationPrivateKey(configured), generated: false };
  const der = await loadSealedKey(db, keyring, 'delegation', () =>
    generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'der' }),
  );
  return { key: createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' }), generated: true };
}

export class Delegations {
  private readonly issuer: DelegationIssuer;
  readonly verifier: DelegationVerifier;

  constructor(
    key: KeyObject,
    private readonly db: Kysely<ApiDatabase>,
    readonly ttlSeconds: number,
  ) {
    this.issuer = new DelegationIssuer(key, ttlSeconds);
    this.verifier = new DelegationVerifier(delegationPublicKeys(this.issuer.publicKeyPem), API_SERVICE);
  }

  get publicKeyPem(): string {
    return this.issuer.publicKeyPem;
  }

  /**
   * A delegation for the user of this request, presented by `holder` to `audience`; undefined when
   * the caller is a service acting for itself (the callee then sees only the service).
   */
  async forRequest(p: Principal, holder: string, audience: string): Promise<string | undefined> {
    // A user, or an Application delivering from git (named `application:<ns>/<name>`).
    if (p.kind !== 'user') return undefined;
    // The callee re-reads the delegated user's account; a project role token has none.
    if (p.projectRole)
      throw new PermissionDeniedError(
        `a project token (${p.name}) is not accepted for repository and ApplicationSet calls`,
      );
    // A single sign-on user has no account to re-read: the delegation carries the session's groups.
    if (p.sso) return this.issuer.mint({ user: p.name, holder, audience, groups: p.groups });
    return this.issuer.mint({ user: p.name, holder, audience });
  }

  /**
   * Records the user of a delegated request as the owner of `resource` for its holder service (the
   * holder reconciles it later as that owner). Only a user acting through the holder's delegation
   * can be recorded: a service cannot name an owner.
   */
  async recordOwner(p: Principal, resource: string, logger?: Logger): Promise<void> {
    const holder = p.via?.replace(/^service:/, '');
    // A delivering Application (a user-like principal whose rights are its project's) may own too:
    // background reconciles then act with its grants of today, and stop when it is gone.
    if (p.kind !== 'user' || !holder || p.delegation?.kind !== 'user')
      throw new PermissionDeniedError('an owner is recorded only for a user acting through a delegation');
    // Background work acts with the owner's rights of today: a local account's, or for a single
    // sign-on user the groups the provider last verified (api.sso_subjects), while they are recent.
    const ownerKind = p.sso ? 'sso' : 'account';
    checkResource(resource);
    await this.db
      .withSchema('api')
      .insertInto('delegation_grants')
      .values({ holder, resource, owner: p.name, owner_kind: ownerKind, recorded_at: new Date() })
      .onConflict((oc) =>
        oc
          .columns(['holder', 'resource'])
          .doUpdateSet({ owner: p.name, owner_kind: ownerKind, recorded_at: new Date() }),
      )
      .execute();
    logger?.info({ holder, resource, owner: p.name, ownerKind }, 'recorded the owner of a resource');
  }

  /** The resource is gone (a deleted set): no owner is recorded for it any more. */
  async forgetOwner(holder: string, resource: string): Promise<void> {
    await this.db
      .withSchema('api')
      .deleteFrom('delegation_grants')
      .where('holder', '=', holder)
      .where('resource', '=', resource)
      .execute();
  }

  /**
   * An owner delegation for background work of `holder` (the authenticated service) on `resource`,
   * for `audience`. A local owner's account is checked when the delegation is presented (enabled,
   * with its rights of today); a single sign-on owner's standing is checked here by `sso` (its
   * groups as last verified with the provider, which the delegation carries), and refused with the
   * reason it gives.
   */
  async forOwner(
    holder: string,
    resource: string,
    audience: string,
    sso?: (subject: string) => Promise<OwnerStanding>,
  ): Promise<{ token: string; owner: string; sso?: { verifiedAt: Date } }> {
    checkResource(resource);
    const grant = await this.db
      .withSchema('api')
      .selectFrom('delegation_grants')
      .select(['owner', 'owner_kind'])
      .where('holder', '=', holder)
      .where('resource', '=', resource)
      .executeTakeFirst();
    if (!grant)
      throw new PermissionDeniedError(`no owner recorded for ${resource} held by service ${holder}`);
    const base = { user: grant.owner, holder, audience, kind: 'owner' as const, resource };
    if (grant.owner_kind !== 'sso') return { token: await this.issuer.mint(base), owner: grant.owner };
    const standing = sso
      ? await sso(grant.owner)
      : { ok: false as const, reason: 'single sign-on owners are not accepted here' };
    if (!standing.ok) throw new PermissionDeniedError(standing.reason);
    const token = await this.issuer.mint({ ...base, groups: standing.groups });
    return { token, owner: grant.owner, sso: { verifiedAt: standing.verifiedAt } };
  }
}

function checkResource(resource: string): void {
  if (!RESOURCE.test(resource))
    throw new ValidationError([{ field: 'resource', description: 'must be <kind>/<namespace>/<name>' }]);
}
