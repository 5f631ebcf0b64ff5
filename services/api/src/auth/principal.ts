// Who is calling. Users are local accounts (with their groups); services authenticate with an
// internal service token; a delegating service (appset) may act on behalf of a user, and is then
// authorised as that user while the audit trail names both.
export interface Principal {
  /** RBAC subject: the account name, or `service:<name>`. */
  name: string;
  groups: readonly string[];
  kind: 'user' | 'service';
  /** Set when a service acts on behalf of this user. */
  via?: string;
  /** The token's id, for logout. */
  tokenId?: string;
  tokenExpiresAt?: Date | undefined;
}

/** The `actor` of events and audit rows: `user:alice`, `service:sync`, `user:alice via service:appset`. */
export function actorOf(p: Principal): string {
  const base = p.kind === 'user' ? `user:${p.name}` : p.name;
  return p.via ? `${base} via ${p.via}` : base;
}
