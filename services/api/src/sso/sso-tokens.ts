// What single sign-on keeps on the client side, encrypted so that only the api reads it (JWE,
// dir + A256GCM, with keys derived from the token signing key): the login state cookie of the web
// flow (state, nonce, PKCE verifier, where to return; 10 minutes) and the refresh token (the
// provider's refresh token, the subject and the client; REFRESH_TTL_SECONDS, revocable by its id).
import { EncryptJWT, jwtDecrypt } from 'jose';
import { UnauthenticatedError } from '@capstan/service';
import type { TokenSigner } from '../auth/tokens.js';

export const REFRESH_TTL_SECONDS = 30 * 24 * 3600;
const STATE_TTL_SECONDS = 600;

export interface LoginState {
  state: string;
  nonce: string;
  verifier: string;
  returnUrl: string;
}

export interface RefreshClaims {
  /** The provider's refresh token. */
  rt: string;
  sub: string;
  /** The OIDC client it was issued to. */
  cid: string;
  /** The refresh token's id (revoked at logout and when used). */
  jti: string;
}

export class SsoTokens {
  private readonly stateKey: Uint8Array;
  private readonly refreshKey: Uint8Array;

  constructor(signer: TokenSigner) {
    this.stateKey = signer.derivedKey('sso-state');
    this.refreshKey = signer.derivedKey('sso-refresh');
  }

  sealState(s: LoginState): Promise<string> {
    return new EncryptJWT({ ...s })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setIssuedAt()
      .setExpirationTime(`${STATE_TTL_SECONDS}s`)
      .encrypt(this.stateKey);
  }

  async openState(cookie: string): Promise<LoginState> {
    try {
      const { payload } = await jwtDecrypt(cookie, this.stateKey);
      const { state, nonce, verifier, returnUrl } = payload;
      if ([state, nonce, verifier, returnUrl].some((v) => typeof v !== 'string')) throw new Error('claims');
      return { state, nonce, verifier, returnUrl } as LoginState;
    } catch (err) {
      throw new UnauthenticatedError('the login took too long or was started elsewhere: log in again', {
        cause: err,
      });
    }
  }

  sealRefresh(c: RefreshClaims): Promise<string> {
    return new EncryptJWT({ rt: c.rt, cid: c.cid })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setSubject(c.sub)
      .setJti(c.jti)
      .setIssuedAt()
      .setExpirationTime(`${REFRESH_TTL_SECONDS}s`)
      .encrypt(this.refreshKey);
  }

  async openRefresh(token: string): Promise<RefreshClaims> {
    try {
      const { payload } = await jwtDecrypt(token, this.refreshKey);
      const { rt, cid, sub, jti } = payload;
      if ([rt, cid, sub, jti].some((v) => typeof v !== 'string')) throw new Error('claims');
      return { rt, cid, sub, jti } as RefreshClaims;
    } catch (err) {
      throw new UnauthenticatedError('invalid or expired refresh token: log in again', { cause: err });
    }
  }
}
