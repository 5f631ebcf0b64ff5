// Single sign-on with an OpenID Connect provider (docs/sso.md), authorization code + PKCE (S256):
// the web UI's flow (/auth/login, /auth/callback: the session cookie of transport/session-cookie.ts)
// and the CLI's (`capstan login --sso`: the CLI receives the code on a loopback listener, the api
// exchanges it). The api verifies the provider's ID token (JWKS, issuer, audience, nonce) and issues
// its own session token for the subject, carrying the values of argocd-rbac-cm's `scopes` claims
// (default: groups) as RBAC groups. Refresh asks the provider again (groups of today); logout revokes
// the session and its refresh token. Every login, refused or not, is a row of audit.access_decisions.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { Kysely } from 'kysely';
import type { Keyring } from '@capstan/sealing';
import { CapstanError, UnauthenticatedError } from '@capstan/service';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { TokenSigner } from '../auth/tokens.js';
import type { RequestContext } from '../support/request.js';
import { invalid } from '../support/validation.js';
import { revokeToken } from '../accounts/account.repository.js';
import { OidcProvider, type OidcClient } from './oidc-provider.js';
import { SsoSettingsSource, type SsoSettings } from './sso-settings.js';
import type { ArgoObjectsInForce } from '../settings/objects-in-force.js';
import { REFRESH_TTL_SECONDS, SsoTokens, type LoginState } from './sso-tokens.js';
import { recordRefused, recordVerified } from './sso-subjects.js';

const PROVIDER_TTL_MS = 5 * 60_000;
const MAX_GROUPS = 500;
const LOOPBACK_REDIRECT = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d{1,5}\/auth\/callback$/;

export interface SsoSession {
  token: string;
  expiresAt: Date;
  refreshToken: string;
  username: string;
  groups: string[];
}

const random = () => randomBytes(32).toString('base64url');
const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** The RBAC subjects of the ID token: the string values of each `scopes` claim (Argo CD's rule). */
export function subjectsOf(claims: JWTPayload, scopes: readonly string[]): string[] {
  const out = new Set<string>();
  for (const scope of scopes) {
    const v = claims[scope];
    for (const x of Array.isArray(v) ? v : [v])
      if (typeof x === 'string' && x !== '' && x.length <= 256 && !/[\p{Cc},]/u.test(x)) out.add(x);
  }
  return [...out].slice(0, MAX_GROUPS);
}

/** A relative path of this site (never another origin): where the browser returns after login. */
export function safeReturnUrl(v: string | undefined): string {
  return v && v.startsWith('/') && !v.startsWith('//') && !v.includes('\\') && !/[\p{Cc}]/u.test(v) ? v : '/';
}

export class SsoService {
  readonly settings: SsoSettingsSource;
  private readonly tokens: SsoTokens;
  private readonly providers = new Map<string, { at: number; provider: OidcProvider }>();

  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      /** argocd-cm, argocd-rbac-cm and argocd-secret in force (applied, else the files given at start). */
      objects: ArgoObjectsInForce;
      authz: Authorizer;
      authn: Authenticator;
      signer: TokenSigner;
      sessionTtlSeconds: number;
      clientSecret: string;
      keyring?: Keyring;
    },
  ) {
    this.settings = new SsoSettingsSource(deps.objects, deps.clientSecret, deps.keyring);
    this.tokens = new SsoTokens(deps.signer);
  }

  get sessionTtlSeconds(): number {
    return this.deps.sessionTtlSeconds;
  }

  async provider(issuer: string): Promise<OidcProvider> {
    const hit = this.providers.get(issuer);
    if (hit && Date.now() - hit.at < PROVIDER_TTL_MS) return hit.provider;
    const provider = await OidcProvider.discover(issuer);
    this.providers.set(issuer, { at: Date.now(), provider });
    return provider;
  }

  /** What the CLI needs to send the browser to the provider. */
  async cliConfig(): Promise<{
    enabled: boolean;
    name: string;
    issuer: string;
    clientId: string;
    scopes: string[];
    authorizationEndpoint: string;
    idTokenClaims: string;
  }> {
    const s = await this.settings.current();
    if (!s)
      return {
        enabled: false,
        name: '',
        issuer: '',
        clientId: '',
        scopes: [],
        authorizationEndpoint: '',
        idTokenClaims: '',
      };
    const p = await this.provider(s.oidc.issuer);
    return {
      enabled: true,
      name: s.oidc.name,
      issuer: s.oidc.issuer,
      clientId: this.cliClient(s).id,
      scopes: s.oidc.requestedScopes,
      authorizationEndpoint: p.metadata.authorization_endpoint,
      idTokenClaims: s.oidc.requestedIDTokenClaims ? JSON.stringify(s.oidc.requestedIDTokenClaims) : '',
    };
  }

  private webClient(s: SsoSettings): OidcClient {
    return { id: s.oidc.clientID, secret: s.clientSecret };
  }

  /** Argo CD's cliClientID is a public client; without it the CLI uses the web client. */
  private cliClient(s: SsoSettings): OidcClient {
    return s.oidc.cliClientID ? { id: s.oidc.cliClientID, secret: '' } : this.webClient(s);
  }

  private webRedirectUri(s: SsoSettings): string {
    if (!s.url)
      throw new CapstanError(
        'FAILED_PRECONDITION',
        "single sign-on in the web UI needs argocd-cm's url (Capstan's external URL)",
      );
    return `${s.url}/auth/callback`;
  }

  /** /auth/login: where to send the browser, and the sealed state for its cookie. */
  async startWebLogin(returnUrl: string | undefined): Promise<{ location: string; stateCookie: string }> {
    const s = await this.settings.required();
    const p = await this.provider(s.oidc.issuer);
    const state: LoginState = {
      state: random(),
      nonce: random(),
      verifier: random(),
      returnUrl: safeReturnUrl(returnUrl),
    };
    const location = p.authorizationUrl({
      clientId: s.oidc.clientID,
      redirectUri: this.webRedirectUri(s),
      scopes: s.oidc.requestedScopes,
      state: state.state,
      nonce: state.nonce,
      codeChallenge: challengeOf(state.verifier),
      idTokenClaims: s.oidc.requestedIDTokenClaims,
    });
    return { location, stateCookie: await this.tokens.sealState(state) };
  }

  /** /auth/callback: the state must be the one this browser's cookie holds. */
  async finishWebLogin(
    ctx: RequestContext,
    q: { code?: string; state?: string; error?: string },
    stateCookie: string | undefined,
  ): Promise<{ session: SsoSession; returnUrl: string }> {
    const fail = (reason: string) => this.refuse(ctx, reason);
    if (q.error) throw await fail(`the provider refused the login: ${q.error.slice(0, 64)}`);
    if (!stateCookie) throw await fail('no login in progress in this browser (state cookie missing)');
    const st = await this.tokens.openState(stateCookie).catch(async () => {
      throw await fail('the login state cookie is expired or invalid');
    });
    if (!q.state || q.state !== st.state) throw await fail("state does not match this browser's login");
    if (!q.code) throw await fail('no authorization code');
    const s = await this.settings.required();
    const session = await this.exchange(ctx, s, this.webClient(s), {
      code: q.code,
      verifier: st.verifier,
      redirectUri: this.webRedirectUri(s),
      nonce: st.nonce,
    });
    return { session, returnUrl: st.returnUrl };
  }

  /** The CLI's code, received on its loopback listener. */
  async cliLogin(
    ctx: RequestContext,
    i: { code: string; codeVerifier: string; redirectUri: string; nonce: string },
  ): Promise<SsoSession> {
    if (!LOOPBACK_REDIRECT.test(i.redirectUri))
      throw invalid('redirectUri', 'must be http://127.0.0.1:<port>/auth/callback (or localhost)');
    const s = await this.settings.required();
    return this.exchange(ctx, s, this.cliClient(s), {
      code: i.code,
      verifier: i.codeVerifier,
      redirectUri: i.redirectUri,
      nonce: i.nonce,
    });
  }

  private async exchange(
    ctx: RequestContext,
    s: SsoSettings,
    client: OidcClient,
    g: { code: string; verifier: string; redirectUri: string; nonce: string },
  ): Promise<SsoSession> {
    const p = await this.provider(s.oidc.issuer);
    try {
      const t = await p.token(client, {
        grant_type: 'authorization_code',
        code: g.code,
        code_verifier: g.verifier,
        redirect_uri: g.redirectUri,
      });
      const claims = await p.verifyIdToken(t.idToken, client.id, g.nonce);
      return await this.issue(ctx, s, claims, client, t.refreshToken);
    } catch (err) {
      if (err instanceof UnauthenticatedError) throw await this.refuse(ctx, err.message);
      throw err;
    }
  }

  /** A new session for a refresh token: the provider is asked again (and may refuse). */
  async refresh(ctx: RequestContext, refreshToken: string): Promise<SsoSession> {
    const r = await this.tokens.openRefresh(refreshToken);
    if (this.deps.authn.isRevoked(r.jti))
      throw await this.refuse(ctx, 'refresh token revoked (logged out or already used)', r.sub);
    const s = await this.settings.required();
    const client = [this.webClient(s), this.cliClient(s)].find((c) => c.id === r.cid);
    if (!client)
      throw await this.refuse(ctx, `refresh token of client ${r.cid}, which is no longer configured`, r.sub);
    const p = await this.provider(s.oidc.issuer);
    try {
      const t = await p.token(client, { grant_type: 'refresh_token', refresh_token: r.rt });
      const claims = await p.verifyIdToken(t.idToken, client.id);
      if (claims.sub !== r.sub)
        throw new UnauthenticatedError('the refreshed ID token names another subject');
      // One use: the old refresh token is revoked before the new session is handed out.
      await revokeToken(this.deps.db, r.jti, new Date(Date.now() + REFRESH_TTL_SECONDS * 1000));
      this.deps.authn.noteRevoked(r.jti);
      return await this.issue(ctx, s, claims, client, t.refreshToken ?? r.rt, r.jti);
    } catch (err) {
      if (!(err instanceof UnauthenticatedError)) throw err;
      // The provider no longer vouches for the user: what it owns stops being reconciled.
      await recordRefused(this.deps.db, r.sub, `refused by the provider at a refresh: ${err.message}`);
      throw await this.refuse(
        ctx,
        `${err.message} (the user's standing for owned ApplicationSets ended)`,
        r.sub,
      );
    }
  }

  private async issue(
    ctx: RequestContext,
    s: SsoSettings,
    claims: JWTPayload,
    client: OidcClient,
    providerRefresh: string | undefined,
    replaces?: string,
  ): Promise<SsoSession> {
    const sub = claims.sub!;
    if (await this.deps.authn.account(sub))
      throw new UnauthenticatedError(`single sign-on subject ${sub} is a local account's name: refused`);
    const groups = subjectsOf(claims, s.scopes);
    const rid = providerRefresh ? randomUUID() : undefined;
    const ttl = this.deps.sessionTtlSeconds;
    const jti = randomUUID();
    const token = await this.deps.signer.sign({
      sub,
      kind: 'sso',
      jti,
      expiresInSeconds: ttl,
      groups,
      ...(rid ? { rid } : {}),
    });
    const refreshToken =
      providerRefresh && rid
        ? await this.tokens.sealRefresh({ rt: providerRefresh, sub, cid: client.id, jti: rid })
        : '';
    // What the provider vouched for now: the groups an ApplicationSet this user owns is reconciled with.
    await recordVerified(this.deps.db, {
      subject: sub,
      issuer: s.oidc.issuer,
      groups,
      chain: rid ?? jti,
      chainExpiresAt: new Date(Date.now() + (rid ? REFRESH_TTL_SECONDS : ttl) * 1000),
      replaces,
    });
    await this.deps.authz.record(
      { name: `login:sso:${sub.slice(0, 200)}` },
      'accounts',
      'login',
      sub.slice(0, 200),
      ctx.via,
      {
        allowed: true,
        reason: `ID token of ${s.oidc.issuer} verified (client ${client.id}); groups: ${groups.join(', ') || 'none'}`,
      },
    );
    return { token, expiresAt: new Date(Date.now() + ttl * 1000), refreshToken, username: sub, groups };
  }

  private async refuse(ctx: RequestContext, reason: string, sub = 'unknown'): Promise<UnauthenticatedError> {
    await this.deps.authz.record(
      { name: `login:sso:${sub.slice(0, 200)}` },
      'accounts',
      'login',
      sub.slice(0, 200),
      ctx.via,
      {
        allowed: false,
        reason: reason.slice(0, 500),
      },
    );
    return new UnauthenticatedError(`single sign-on failed: ${reason}`);
  }
}
