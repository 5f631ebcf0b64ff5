// Signed tokens (JWT, HS256 via jose): short-lived session tokens from login, long-lived API
// tokens for automation, and project role tokens (sub `proj:<project>:<role>`, Argo CD's). Each
// carries a jti so that logout and token deletion can revoke it. Single sign-on sessions (`sso`)
// carry the groups the OIDC provider's ID token gave and the id of their refresh token (sso/).
import { createHash } from 'node:crypto';
import { jwtVerify, SignJWT, errors as joseErrors } from 'jose';
import { UnauthenticatedError } from '@capstan/service';

export const ISSUER = 'capstan';

export type TokenKind = 'session' | 'api' | 'project' | 'sso';
const KINDS: ReadonlySet<unknown> = new Set<TokenKind>(['session', 'api', 'project', 'sso']);

export interface TokenClaims {
  sub: string;
  kind: TokenKind;
  jti: string;
  iat: number;
  exp: number | undefined;
  /** sso: the RBAC subjects of the ID token's scope claims (argocd-rbac-cm `scopes`). */
  groups?: string[];
  /** sso: the id of the refresh token issued with the session (revoked with it at logout). */
  rid?: string;
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

export class TokenSigner {
  constructor(private readonly key: Uint8Array) {}

  /** A key for another purpose (the SSO state cookie, refresh tokens), derived from this one. */
  derivedKey(purpose: string): Uint8Array {
    return createHash('sha256').update(`capstan-${purpose}\0`).update(this.key).digest();
  }

  async sign(claims: {
    sub: string;
    kind: TokenKind;
    jti: string;
    expiresInSeconds?: number | undefined;
    /** Seconds since the epoch (default: now). */
    iat?: number;
    groups?: string[];
    rid?: string;
  }): Promise<string> {
    const extra = claims.kind === 'sso' ? { groups: claims.groups ?? [], rid: claims.rid } : {};
    const jwt = new SignJWT({ kind: claims.kind, ...extra })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setJti(claims.jti)
      .setIssuer(ISSUER)
      .setIssuedAt(claims.iat);
    if (claims.expiresInSeconds)
      jwt.setExpirationTime((claims.iat ?? Math.floor(Date.now() / 1000)) + claims.expiresInSeconds);
    return jwt.sign(this.key);
  }

  async verify(token: string): Promise<TokenClaims> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'] });
      const kind = payload.kind as TokenKind;
      if (!KINDS.has(kind) || !payload.sub || !payload.jti || payload.iat === undefined) {
        throw new UnauthenticatedError('token is missing required claims');
      }
      const out: TokenClaims = {
        sub: payload.sub,
        kind,
        jti: payload.jti,
        iat: payload.iat,
        exp: payload.exp,
      };
      if (kind === 'sso') {
        if (!isStringList(payload.groups)) throw new UnauthenticatedError('token is missing required claims');
        out.groups = payload.groups;
        if (typeof payload.rid === 'string') out.rid = payload.rid;
      }
      return out;
    } catch (err) {
      if (err instanceof UnauthenticatedError) throw err;
      if (err instanceof joseErrors.JWTExpired)
        throw new UnauthenticatedError('token expired: log in again', { cause: err });
      throw new UnauthenticatedError('invalid token', { cause: err });
    }
  }
}
