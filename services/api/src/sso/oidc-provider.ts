// One OpenID Connect provider, as the api talks to it: discovery, the authorization URL
// (authorization code + PKCE S256), the token endpoint (code and refresh grants, client_secret_basic
// for a confidential client) and ID token verification against the provider's JWKS (jose's
// createRemoteJWKSet: keys fetched and rotated as the provider publishes them). Every fetch is
// bounded in time and size; the provider's answers are untrusted input.
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { UnauthenticatedError, UnavailableError } from '@capstan/service';

const TIMEOUT_MS = 10_000;
const MAX_BODY = 256 * 1024;

export interface ProviderMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  end_session_endpoint?: string;
}

export interface OidcClient {
  id: string;
  /** Empty for a public client (PKCE only). */
  secret: string;
}

export interface TokenResponse {
  idToken: string;
  refreshToken: string | undefined;
}

async function boundedJson(res: Response, what: string): Promise<unknown> {
  const text = await res.text();
  if (text.length > MAX_BODY) throw new UnavailableError(`${what}: answer larger than ${MAX_BODY} bytes`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UnavailableError(`${what}: answer is not JSON (HTTP ${res.status})`);
  }
}

const isHttpUrl = (v: unknown): v is string => typeof v === 'string' && /^https?:\/\//.test(v);

export class OidcProvider {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet>;

  private constructor(readonly metadata: ProviderMetadata) {
    this.jwks = createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: TIMEOUT_MS });
  }

  /** Reads `<issuer>/.well-known/openid-configuration`; its issuer must be exactly `issuer`. */
  static async discover(issuer: string): Promise<OidcProvider> {
    const url = `${issuer}/.well-known/openid-configuration`;
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
    } catch (err) {
      throw new UnavailableError(`OIDC provider ${issuer} cannot be reached`, { cause: err });
    }
    if (!res.ok) throw new UnavailableError(`OIDC discovery at ${url} answered HTTP ${res.status}`);
    const m = (await boundedJson(res, 'OIDC discovery')) as Partial<ProviderMetadata>;
    if (m.issuer !== issuer)
      throw new UnavailableError(`OIDC discovery at ${url} names another issuer (${String(m.issuer)})`);
    for (const key of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const)
      if (!isHttpUrl(m[key])) throw new UnavailableError(`OIDC discovery at ${url} has no ${key}`);
    return new OidcProvider(m as ProviderMetadata);
  }

  authorizationUrl(p: {
    clientId: string;
    redirectUri: string;
    scopes: string[];
    state: string;
    nonce: string;
    codeChallenge: string;
    idTokenClaims?: Record<string, unknown> | undefined;
  }): string {
    const url = new URL(this.metadata.authorization_endpoint);
    const q = url.searchParams;
    q.set('response_type', 'code');
    q.set('client_id', p.clientId);
    q.set('redirect_uri', p.redirectUri);
    q.set('scope', p.scopes.join(' '));
    q.set('state', p.state);
    q.set('nonce', p.nonce);
    q.set('code_challenge', p.codeChallenge);
    q.set('code_challenge_method', 'S256');
    if (p.idTokenClaims) q.set('claims', JSON.stringify({ id_token: p.idTokenClaims }));
    return url.toString();
  }

  /** The token endpoint: `authorization_code` (with the PKCE verifier) or `refresh_token`. */
  async token(client: OidcClient, grant: Record<string, string>): Promise<TokenResponse> {
    const body = new URLSearchParams(grant);
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (client.secret) {
      const basic = `${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`;
      headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
    } else body.set('client_id', client.id);
    let res: Response;
    try {
      res = await fetch(this.metadata.token_endpoint, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(TIMEOUT_MS),
        redirect: 'error',
      });
    } catch (err) {
      throw new UnavailableError('the OIDC provider cannot be reached', { cause: err });
    }
    const answer = (await boundedJson(res, 'OIDC token endpoint')) as Record<string, unknown>;
    if (!res.ok) {
      // The provider's error code only (RFC 6749 5.2); its description may echo input.
      const code = typeof answer.error === 'string' ? answer.error.slice(0, 64) : `HTTP ${res.status}`;
      throw new UnauthenticatedError(`the OIDC provider refused the ${grant.grant_type} grant: ${code}`);
    }
    if (typeof answer.id_token !== 'string')
      throw new UnauthenticatedError('the OIDC provider gave no ID token (is the openid scope requested?)');
    return {
      idToken: answer.id_token,
      refreshToken: typeof answer.refresh_token === 'string' ? answer.refresh_token : undefined,
    };
  }

  /** Verifies signature (JWKS), issuer, audience, expiry and, when given, the nonce. */
  async verifyIdToken(idToken: string, clientId: string, nonce?: string): Promise<JWTPayload> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, this.jwks, {
        issuer: this.metadata.issuer,
        audience: clientId,
        clockTolerance: 30,
      }));
    } catch (err) {
      throw new UnauthenticatedError('the ID token did not verify', { cause: err });
    }
    if (nonce !== undefined && payload.nonce !== nonce)
      throw new UnauthenticatedError('the ID token was issued for another login (nonce)');
    if (!payload.sub) throw new UnauthenticatedError('the ID token has no subject');
    return payload;
  }
}
