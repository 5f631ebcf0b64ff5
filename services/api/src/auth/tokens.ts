// Signed tokens (JWT, HS256 via jose): short-lived session tokens from login, long-lived API
// tokens for automation, and project role tokens (sub `proj:<project>:<role>`, Argo CD's). Each
// carries a jti so that logout and token deletion can revoke it.
import { jwtVerify, SignJWT, errors as joseErrors } from 'jose';
import { UnauthenticatedError } from '@capstan/service';

export const ISSUER = 'capstan';

export type TokenKind = 'session' | 'api' | 'project';
const KINDS: ReadonlySet<unknown> = new Set<TokenKind>(['session', 'api', 'project']);

export interface TokenClaims {
  sub: string;
  kind: TokenKind;
  jti: string;
  iat: number;
  exp: number | undefined;
}

export class TokenSigner {
  constructor(private readonly key: Uint8Array) {}

  async sign(claims: {
    sub: string;
    kind: TokenKind;
    jti: string;
    expiresInSeconds?: number | undefined;
    /** Seconds since the epoch (default: now). */
    iat?: number;
  }): Promise<string> {
    const jwt = new SignJWT({ kind: claims.kind })
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
      return { sub: payload.sub, kind, jti: payload.jti, iat: payload.iat, exp: payload.exp };
    } catch (err) {
      if (err instanceof UnauthenticatedError) throw err;
      if (err instanceof joseErrors.JWTExpired)
        throw new UnauthenticatedError('token expired: log in again', { cause: err });
      throw new UnauthenticatedError('invalid token', { cause: err });
    }
  }
}
