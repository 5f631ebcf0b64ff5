// Every call presents a bearer token: a session or API token (JWT signed by the api) or an internal
// service token, accepted only on a connection whose verified client certificate names that same
// service. A service acts for a user only with a delegation the api minted for it (holder) and for
// the api (audience); the user is then re-read (enabled, groups of today), or, for an Application
// that delivers from git, its project's grants of today. Accounts and revocations are cached for a couple of seconds so reads stay cheap;
// a revocation made on this replica takes effect at once, on others within the refresh interval.
import type { Kysely } from 'kysely';
import { UnauthenticatedError, PermissionDeniedError } from '@capstan/service';
import type { ApiDatabase } from '../support/db.table.js';
import { revokedSince, type AccountRecord } from '../accounts/account.repository.js';
import { anonymousEnabled, effectiveAccount } from '../settings/argo-accounts.js';
import type { ArgoObjectsInForce } from '../settings/objects-in-force.js';
import type { TokenClaims, TokenSigner } from './tokens.js';
import { authenticateService, type ServiceTokens } from '@capstan/service-identity';
import type { Delegations } from './delegations.js';
import { ANONYMOUS_USER, type Principal } from './principal.js';
import { delivererRef } from '../delivery/deliverer-rights.js';
import type { DeliveringApplications } from '../delivery/delivering-applications.js';
import { findProjectToken, type ProjectTokenRecord } from '../projects/project-tokens.repository.js';

const ACCOUNT_TTL_MS = 2000;

export interface AuthenticatorOptions {
  db: Kysely<ApiDatabase>;
  /** argocd-cm in force (applied, else the file given at start): account keys, anonymous access. */
  objects: ArgoObjectsInForce;
  signer: TokenSigner;
  serviceTokens: ServiceTokens;
  delegations: Delegations;
  deliverers: DeliveringApplications;
}

/** What the transport knows about a call besides its token. */
export interface CallCredentials {
  /** The service named by the connection's verified client certificate (gRPC over mutual TLS). */
  peerService?: string | undefined;
  /** The `capstan-delegation` metadata. */
  delegation?: string | undefined;
  /** A refused legacy header (`capstan-on-behalf-of`, `x-capstan-actor`) was present. */
  declaredActor?: boolean;
  /**
   * The web UI's session cookie (HTTP only, and only when no Authorization header came): it may
   * hold a session token and nothing else, and a state-changing call needs its CSRF header
   * (transport/session-cookie.ts checks it).
   */
  cookie?: { token: string; csrfVerified: boolean } | undefined;
}

export class Authenticator {
  private readonly accounts = new Map<string, { at: number; account: AccountRecord | undefined }>();
  private readonly revoked = new Set<string>();
  /** Project role tokens by `<sub>/<jti>`: their rows, read again after ACCOUNT_TTL_MS. */
  private readonly projectTokens = new Map<string, { at: number; row: ProjectTokenRecord | undefined }>();
  /** Tokens whose signature was verified, until they expire: verifying an HMAC per call costs more than the read itself. */
  private readonly verified = new Map<string, TokenClaims>();
  private lastRevocation: Date | undefined;
  private anonymous: { at: number; on: boolean } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: AuthenticatorOptions) {}

  async start(refreshMs = 2000): Promise<void> {
    await this.refreshRevocations();
    this.timer = setInterval(() => void this.refreshRevocations().catch(() => undefined), refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async refreshRevocations(): Promise<void> {
    for (const r of await revokedSince(this.opts.db, this.lastRevocation)) {
      this.revoked.add(r.jti);
      if (!this.lastRevocation || r.revokedAt > this.lastRevocation) this.lastRevocation = r.revokedAt;
    }
  }

  /** Whether a token id (a session's, or an SSO refresh token's) has been revoked. */
  isRevoked(jti: string): boolean {
    return this.revoked.has(jti);
  }

  /** Called after this replica revokes a token or changes an account. */
  noteRevoked(jti: string): void {
    this.revoked.add(jti);
  }

  forgetAccount(name: string): void {
    this.accounts.delete(name);
  }

  /** After delete-token on this replica: the project token is refused at once. */
  forgetProjectToken(project: string, role: string, id: string): void {
    this.projectTokens.delete(`proj:${project}:${role}/${id}`);
  }

  /** After an applied argocd-cm (its account keys): every account is read again. */
  forgetAccounts(): void {
    this.accounts.clear();
    this.anonymous = undefined;
  }

  /** argocd-cm's users.anonymous.enabled, read again after ACCOUNT_TTL_MS (live, like the account keys). */
  private async anonymousOn(): Promise<boolean> {
    if (this.anonymous && Date.now() - this.anonymous.at < ACCOUNT_TTL_MS) return this.anonymous.on;
    const on = anonymousEnabled(await this.opts.objects.data('argocd-cm'));
    this.anonymous = { at: Date.now(), on };
    return on;
  }

  async account(name: string): Promise<AccountRecord | undefined> {
    const hit = this.accounts.get(name);
    if (hit && Date.now() - hit.at < ACCOUNT_TTL_MS) return hit.account;
    const account = await effectiveAccount(this.opts.objects, name);
    this.accounts.set(name, { at: Date.now(), account });
    return account;
  }

  /** `authorization` is the header value ("Bearer <token>"). */
  async authenticate(authorization: string | undefined, call: CallCredentials = {}): Promise<Principal> {
    if (call.declaredActor)
      throw new PermissionDeniedError(
        'a service acts for a user only with a delegation, never a declared name',
      );
    if (!authorization && call.cookie) return this.fromCookie(call.cookie, call);
    if (!authorization) {
      // Only a caller that presents nothing at all: a service connection or a delegation without a
      // token is an error, never anonymous.
      if (call.peerService === undefined && call.delegation === undefined && (await this.anonymousOn()))
        return ANONYMOUS_USER;
      throw new UnauthenticatedError('no token: log in first (capstan login) or pass an API token');
    }
    const m = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
    if (!m) throw new UnauthenticatedError('authorization must be "Bearer <token>"');
    const token = m[1]!;

    if (token.split('.').length !== 3) {
      const service = authenticateService(
        { tokens: this.opts.serviceTokens, requireCertificate: true },
        authorization,
        call.peerService,
      );
      if (call.delegation === undefined) return { name: `service:${service}`, groups: [], kind: 'service' };
      const d = await this.opts.delegations.verifier.verify(call.delegation, service);
      const delegation = { kind: d.kind, ...(d.resource ? { resource: d.resource } : {}) };
      // An Application that delivered an ApplicationSet from git: its project's grants of today.
      const deliverer = delivererRef(d.user);
      if (deliverer) return this.opts.deliverers.principal(deliverer, `service:${service}`, delegation);
      // A single sign-on user: the groups its session carried when the api minted the delegation.
      if (d.groups !== undefined) {
        if (await this.account(d.user))
          throw new UnauthenticatedError(
            `single sign-on subject ${d.user} is a local account's name: refused`,
          );
        const via = `service:${service}`;
        return {
          name: d.user,
          groups: d.groups,
          kind: 'user',
          via,
          delegation,
          sso: { refreshId: undefined },
        };
      }
      const user = await this.account(d.user);
      if (!user || !user.enabled)
        throw new UnauthenticatedError(`account ${d.user} does not exist or is disabled`);
      return {
        name: user.name,
        groups: user.groups,
        kind: 'user',
        via: `service:${service}`,
        delegation,
      };
    }
    if (call.delegation !== undefined)
      throw new UnauthenticatedError('a delegation is presented only with a service identity');
    return this.fromJwt(token);
  }

  /** The UI's cookie: a session token of a user (never an API or service token), CSRF checked. */
  private async fromCookie(
    cookie: NonNullable<CallCredentials['cookie']>,
    call: CallCredentials,
  ): Promise<Principal> {
    if (call.delegation !== undefined || call.peerService !== undefined)
      throw new UnauthenticatedError('a session cookie is accepted from a browser only');
    if (!cookie.csrfVerified)
      throw new PermissionDeniedError(
        'a state-changing call with the session cookie needs the x-capstan-csrf header of that session',
      );
    if (cookie.token.split('.').length !== 3)
      throw new UnauthenticatedError('the session cookie holds no session');
    return this.fromJwt(cookie.token, 'session');
  }

  private async fromJwt(token: string, onlyKind?: 'session'): Promise<Principal> {
    let claims = this.verified.get(token);
    if (claims && claims.exp !== undefined && claims.exp * 1000 <= Date.now()) {
      this.verified.delete(token);
      claims = undefined;
    }
    if (!claims) {
      claims = await this.opts.signer.verify(token);
      if (this.verified.size >= 10_000) this.verified.clear();
      this.verified.set(token, claims);
    }
    if (onlyKind && claims.kind !== onlyKind && claims.kind !== 'sso')
      throw new UnauthenticatedError('the session cookie holds no session: log in again');
    if (claims.kind === 'project') return this.fromProjectToken(claims);
    if (this.revoked.has(claims.jti)) throw new UnauthenticatedError('token has been revoked: log in again');
    if (claims.kind === 'sso') return this.fromSsoSession(claims);
    const account = await this.account(claims.sub);
    if (!account || !account.enabled)
      throw new UnauthenticatedError(`account ${claims.sub} does not exist or is disabled`);
    if (
      claims.kind === 'session' &&
      claims.iat * 1000 < Math.floor(account.passwordChangedAt.getTime() / 1000) * 1000
    ) {
      throw new UnauthenticatedError('password changed since this session began: log in again');
    }
    if (claims.kind === 'api' && !account.capabilities.includes('apiKey')) {
      throw new UnauthenticatedError(`account ${account.name} may not use API tokens`);
    }
    return {
      name: account.name,
      groups: account.groups,
      kind: 'user',
      tokenId: claims.jti,
      tokenExpiresAt: claims.exp ? new Date(claims.exp * 1000) : undefined,
    };
  }

  /**
   * A project role token (`proj:<project>:<role>`): accepted while the role lists it with the same
   * issued-at (Argo CD's rule: delete-token, or the role or project removed, invalidates it). Its
   * rights are exactly the role's policy lines.
   */
  private async fromProjectToken(claims: TokenClaims): Promise<Principal> {
    const m = /^proj:([^:]+):([^:]+)$/.exec(claims.sub);
    if (!m) throw new UnauthenticatedError('invalid token');
    const [, project = '', role = ''] = m;
    const key = `${claims.sub}/${claims.jti}`;
    let hit = this.projectTokens.get(key);
    if (!hit || Date.now() - hit.at >= ACCOUNT_TTL_MS) {
      hit = { at: Date.now(), row: await findProjectToken(this.opts.db, project, role, claims.jti) };
      if (this.projectTokens.size >= 10_000) this.projectTokens.clear();
      this.projectTokens.set(key, hit);
    }
    const row = hit.row;
    if (!row || row.iat !== claims.iat || (row.expiresAt && row.expiresAt.getTime() <= Date.now()))
      throw new UnauthenticatedError(`token of ${claims.sub} has been deleted or replaced`);
    return {
      name: claims.sub,
      groups: [],
      kind: 'user',
      projectRole: { project, role },
      tokenId: claims.jti,
      tokenExpiresAt: claims.exp ? new Date(claims.exp * 1000) : undefined,
    };
  }

  /**
   * A single sign-on session: the user is the ID token's subject with the groups it carried (no
   * local account). A subject that is also a local account's name is refused, so a provider can
   * never speak for a local account (admin included).
   */
  private async fromSsoSession(claims: TokenClaims): Promise<Principal> {
    if (await this.account(claims.sub))
      throw new UnauthenticatedError(
        `single sign-on subject ${claims.sub} is a local account's name: refused`,
      );
    return {
      name: claims.sub,
      groups: claims.groups ?? [],
      kind: 'user',
      sso: { refreshId: claims.rid },
      tokenId: claims.jti,
      tokenExpiresAt: claims.exp ? new Date(claims.exp * 1000) : undefined,
    };
  }
}
