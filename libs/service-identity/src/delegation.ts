// Delegations: how a service acts for a user without being able to act for anyone. The api, which
// authenticated the user, mints per forwarded request a short-lived token (JWT, EdDSA over the api's
// Ed25519 key) that names
//   sub  the user (account name),
//   hld  the service allowed to present it (its holder),
//   aud  the one service that may accept it,
//   kind `user` (minted for a request the user made) or `owner` (minted for background work on
//        `res`, for the owner the api recorded when that user last created/updated it).
// A receiver accepts one only together with the holder's own service identity (token bound to its
// client certificate), when hld is that service, aud is the receiver, and it has not expired.
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  type KeyObject,
} from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { PermissionDeniedError, UnauthenticatedError, ValidationError } from '@capstan/service';
import { SERVICE_NAME } from './service-tokens.js';

export const DELEGATION_METADATA_KEY = 'capstan-delegation';
export const DELEGATION_ISSUER = 'capstan-api';
const TYP = 'capstan-delegation+jwt';
/** Bounds of a delegation's lifetime; a verifier refuses longer-lived ones. */
export const MIN_DELEGATION_TTL_SECONDS = 10;
export const MAX_DELEGATION_TTL_SECONDS = 900;
const CLOCK_TOLERANCE_SECONDS = 5;

export type DelegationKind = 'user' | 'owner';

export interface Delegation {
  /** The user the holder acts for. */
  user: string;
  holder: string;
  audience: string;
  kind: DelegationKind;
  /** For owner delegations: the resource whose recorded owner `user` is. */
  resource?: string;
  /**
   * A user the api knows only from a single sign-on session (no local account): the groups that
   * session carried (an owner delegation: the groups the provider last verified), for the api to
   * authorise a call-back with (claim `grp`).
   */
  groups?: string[];
  id: string;
  expiresAt: Date;
}

export interface MintRequest {
  user: string;
  holder: string;
  audience: string;
  kind?: DelegationKind;
  resource?: string;
  /** A single sign-on user's groups (see Delegation.groups). */
  groups?: readonly string[];
  ttlSeconds?: number;
}

/** An Ed25519 key pair in PEM (PKCS#8 private, SPKI public): for the api and the verifiers' settings. */
export function generateDelegationKeyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

function ed25519(key: KeyObject, field: string): KeyObject {
  if (key.asymmetricKeyType !== 'ed25519')
    throw new ValidationError([{ field, description: 'must be an Ed25519 key (PEM)' }]);
  return key;
}

export function delegationPrivateKey(pem: string, field = 'auth.delegation-key'): KeyObject {
  try {
    return ed25519(createPrivateKey(pem), field);
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    throw new ValidationError([{ field, description: 'must be an Ed25519 private key in PEM' }], {
      cause: err,
    });
  }
}

/** One public key, or several PEM blocks concatenated (during a rotation). */
export function delegationPublicKeys(pem: string, field = 'auth.delegation-public-key'): KeyObject[] {
  const blocks = pem.match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? [];
  if (blocks.length === 0)
    throw new ValidationError([{ field, description: 'must hold an Ed25519 public key in PEM' }]);
  return blocks.map((b) => {
    try {
      return ed25519(createPublicKey(b), field);
    } catch (err) {
      if (err instanceof ValidationError) throw err;
      throw new ValidationError([{ field, description: 'must hold an Ed25519 public key in PEM' }], {
        cause: err,
      });
    }
  });
}

export class DelegationIssuer {
  readonly publicKeyPem: string;

  constructor(
    private readonly key: KeyObject,
    private readonly defaultTtlSeconds = 120,
  ) {
    this.publicKeyPem = createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
  }

  async mint(req: MintRequest): Promise<string> {
    const ttl = req.ttlSeconds ?? this.defaultTtlSeconds;
    if (ttl < MIN_DELEGATION_TTL_SECONDS || ttl > MAX_DELEGATION_TTL_SECONDS)
      throw new ValidationError([
        {
          field: 'ttlSeconds',
          description: `must be between ${MIN_DELEGATION_TTL_SECONDS} and ${MAX_DELEGATION_TTL_SECONDS}`,
        },
      ]);
    if (!SERVICE_NAME.test(req.holder) || !SERVICE_NAME.test(req.audience))
      throw new ValidationError([
        { field: 'holder', description: 'holder and audience must be service names' },
      ]);
    const kind = req.kind ?? 'user';
    if (kind === 'owner' && !req.resource)
      throw new ValidationError([
        { field: 'resource', description: 'an owner delegation names its resource' },
      ]);
    return new SignJWT({
      hld: req.holder,
      kind,
      ...(req.resource ? { res: req.resource } : {}),
      ...(req.groups ? { grp: [...req.groups] } : {}),
    })
      .setProtectedHeader({ alg: 'EdDSA', typ: TYP })
      .setIssuer(DELEGATION_ISSUER)
      .setSubject(req.user)
      .setAudience(req.audience)
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime(`${ttl}s`)
      .sign(this.key);
  }
}

export class DelegationVerifier {
  /** `self`: the service name of the receiver (the only audience it accepts). */
  constructor(
    private readonly keys: readonly KeyObject[],
    private readonly self: string,
  ) {}

  /**
   * The delegation, when it is valid for `holder` (the service authenticated on this call) and
   * this receiver. Throws UnauthenticatedError for a bad, expired or foreign-signed token,
   * PermissionDeniedError when it was minted for another holder or audience.
   */
  async verify(token: string, holder: string): Promise<Delegation> {
    let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'] | undefined;
    let lastErr: unknown;
    for (const key of this.keys) {
      try {
        ({ payload } = await jwtVerify(token, key, {
          issuer: DELEGATION_ISSUER,
          algorithms: ['EdDSA'],
          typ: TYP,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          requiredClaims: ['sub', 'aud', 'exp', 'iat', 'jti'],
        }));
        break;
      } catch (err) {
        lastErr = err;
        if (!(err instanceof joseErrors.JWSSignatureVerificationFailed)) break;
      }
    }
    if (!payload) {
      if (lastErr instanceof joseErrors.JWTExpired)
        throw new UnauthenticatedError('delegation expired', { cause: lastErr });
      throw new UnauthenticatedError('invalid delegation', { cause: lastErr });
    }
    const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    if (aud.length !== 1 || aud[0] !== this.self)
      throw new PermissionDeniedError(`delegation is not for ${this.self}`);
    if (payload.hld !== holder)
      throw new PermissionDeniedError(`delegation was not issued to service ${holder}`);
    if (payload.exp! - payload.iat! > MAX_DELEGATION_TTL_SECONDS)
      throw new UnauthenticatedError('delegation lives longer than allowed');
    const kind = payload.kind;
    if (kind !== 'user' && kind !== 'owner') throw new UnauthenticatedError('invalid delegation');
    const resource = typeof payload.res === 'string' ? payload.res : undefined;
    if (kind === 'owner' && !resource) throw new UnauthenticatedError('invalid delegation');
    const grp = payload.grp;
    if (grp !== undefined && (!Array.isArray(grp) || grp.some((g) => typeof g !== 'string')))
      throw new UnauthenticatedError('invalid delegation');
    return {
      user: payload.sub!,
      holder,
      audience: this.self,
      kind,
      ...(resource ? { resource } : {}),
      ...(grp !== undefined ? { groups: grp as string[] } : {}),
      id: payload.jti!,
      expiresAt: new Date(payload.exp! * 1000),
    };
  }
}

/** How a delegation reads in audit rows: `user:alice via service:appset` (owner: `… as owner of <res>`). */
export function delegatedActor(d: Pick<Delegation, 'user' | 'holder' | 'kind' | 'resource'>): string {
  const base = `user:${d.user} via service:${d.holder}`;
  return d.kind === 'owner' ? `${base} as owner of ${d.resource}` : base;
}
