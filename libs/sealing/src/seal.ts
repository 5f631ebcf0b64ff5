// AES-256-GCM sealing: a random 96-bit nonce per seal, the 16-byte tag appended to the ciphertext,
// the key id kept beside it (so keys can rotate), and the row's identity bound in as additional
// authenticated data: a ciphertext copied onto another row (another tenant's) fails to open instead
// of silently lending its secret. The format is what the services already store:
// `key_id text, nonce bytea, ciphertext bytea` (ciphertext || tag), plaintext bytes or UTF-8 JSON.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { CapstanError } from '@capstan/service';
import type { Keyring } from './keyring.js';

export interface Sealed {
  keyId: string;
  nonce: Buffer;
  /** Ciphertext followed by the 16-byte GCM tag. */
  ciphertext: Buffer;
}

/** A seal or an open failed. Its message names the row and the key id, never material. */
export class SealError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INTERNAL', message, options);
  }
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals `plaintext` with the active key, bound to `boundTo` (the row's identity, e.g. a
 * credential id or a server URL: the same string must be given to open it).
 */
export function seal(keyring: Keyring, boundTo: string, plaintext: Buffer): Sealed {
  const key = keyring.keys.get(keyring.activeKeyId);
  if (!key) throw new SealError(`active encryption key ${keyring.activeKeyId} is not loaded`);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(boundTo, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { keyId: keyring.activeKeyId, nonce, ciphertext: Buffer.concat([body, cipher.getAuthTag()]) };
}

/**
 * Opens what `seal` sealed for the same `boundTo`, with whichever loaded key it names. `label`
 * names the row in errors (default: `boundTo`), e.g. `credential <id>`.
 */
export function open(keyring: Keyring, boundTo: string, sealed: Sealed, label = boundTo): Buffer {
  const key = keyring.keys.get(sealed.keyId);
  if (!key) throw new SealError(`${label} is sealed with key ${sealed.keyId}, which is not loaded`);
  if (sealed.nonce.length !== NONCE_BYTES || sealed.ciphertext.length < TAG_BYTES)
    throw new SealError(`${label} cannot be decrypted with key ${sealed.keyId}: malformed ciphertext`);
  const tagAt = sealed.ciphertext.length - TAG_BYTES;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.nonce);
    decipher.setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(sealed.ciphertext.subarray(tagAt));
    return Buffer.concat([decipher.update(sealed.ciphertext.subarray(0, tagAt)), decipher.final()]);
  } catch (err) {
    // The cause is OpenSSL's authentication failure: it holds no secret material.
    throw new SealError(`${label} cannot be decrypted with key ${sealed.keyId}`, { cause: err });
  }
}

/** Seals a JSON value (UTF-8), as credentials are stored. */
export function sealJson(keyring: Keyring, boundTo: string, value: unknown): Sealed {
  return seal(keyring, boundTo, Buffer.from(JSON.stringify(value), 'utf8'));
}

/** Opens a sealed JSON value; the caller validates its shape. */
export function openJson(keyring: Keyring, boundTo: string, sealed: Sealed, label = boundTo): unknown {
  const plain = open(keyring, boundTo, sealed, label);
  try {
    return JSON.parse(plain.toString('utf8'));
  } catch {
    // Authenticated but not JSON: a bug, not tampering. No cause: JSON.parse's message may quote it.
    throw new SealError(`${label} does not hold JSON`);
  }
}

/** Whether a sealed value should be re-sealed with the active key (rotation). */
export function needsResealing(keyring: Keyring, sealed: Pick<Sealed, 'keyId'>): boolean {
  return sealed.keyId !== keyring.activeKeyId;
}

/** The same plaintext sealed again with the active key, bound to the same identity. */
export function resealWithActiveKey(
  keyring: Keyring,
  boundTo: string,
  sealed: Sealed,
  label = boundTo,
): Sealed {
  return seal(keyring, boundTo, open(keyring, boundTo, sealed, label));
}
