// Who is calling. Users are local accounts (with their groups); an Application that delivers
// objects from git acts with rights its project grants (deliverer, never RBAC lines); services authenticate with an
// internal service token bound to their client certificate; a service acts for a user only with a
// delegation the api minted for it, and is then authorised as that user (with the account's rights
// of today) while the audit trail names both.
import type { DelivererGrants } from '../delivery/deliverer-rights.js';

export interface Principal {
  /** RBAC subject: the account name, or `service:<name>`. */
  name: string;
  groups: readonly string[];
  kind: 'user' | 'service';
  /** Set when a service acts for this user: `service:<holder>`. */
  via?: string;
  /** The delegation the holder presented (owner: background work on `resource`). */
  delegation?: { kind: 'user' | 'owner'; resource?: string };
  /** Set for an Application delivering from git (`application:<ns>/<name>`): its project's grants. */
  deliverer?: DelivererGrants;
  /** A project role token's (`name` is then `proj:<project>:<role>`): its rights are the role's lines. */
  projectRole?: { project: string; role: string };
  /** A single sign-on session's (`name` is the ID token's subject, `groups` its scope claims). */
  sso?: { refreshId: string | undefined };
  /**
   * A call without a token while argocd-cm's users.anonymous.enabled is "true" (`name` is
   * `anonymous`): its rights are the default role's alone, never a policy line naming a subject.
   */
  anonymous?: true;
  /** The token's id, for logout. */
  tokenId?: string;
  tokenExpiresAt?: Date | undefined;
}

/**
 * The `actor` of events and audit rows: `user:alice`, `service:sync`, `user:alice via service:appset`,
 * `proj:team-a:ci` (a project role token).
 */
export function actorOf(p: Principal): string {
  const base = p.kind === 'user' && !p.deliverer && !p.projectRole ? `user:${p.name}` : p.name;
  if (!p.via) return base;
  const owner = p.delegation?.kind === 'owner' ? ` as owner of ${p.delegation.resource}` : '';
  return `${base} via ${p.via}${owner}`;
}

/** The caller of a call without a token when anonymous access is on (users.anonymous.enabled). */
export const ANONYMOUS_USER: Principal = Object.freeze({
  name: 'anonymous',
  groups: [],
  kind: 'user',
  anonymous: true,
});
