// AES-256-GCM sealing of a credential's secret parts. The credential id is bound in as
// additional authenticated data, so a ciphertext copied onto another row (another tenant's
// credential) fails to open instead of silently lending its secret.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { CapstanError } from '@capstan/service';
import type { CredentialSecret } from './credential.js';
import type { Keyring } from './keyring.js';

export interface SealedSecret {
  keyId: string;
  nonce: Buffer;
  /** Ciphertext followed by the 16-byte GCM tag. */
  ciphertext: Buffer;
}

export class CredentialDecryptionError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INTERNAL', message, options);
  }
}

const TAG_BYTES = 16;

export function sealSecret(keyring: Keyring, credentialId: string, secret: CredentialSecret): SealedSecret {
  const key = keyring.keys.get(keyring.activeKeyId);
  if (!key) throw new CredentialDecryptionError(`active encryption key ${keyring.activeKeyId} is not loaded`);
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(credentialId, 'utf8'));
  const body = Buffer.concat([cipher.update(JSON.stringify(secret), 'utf8'), cipher.final()]);
  return { keyId: keyring.activeKeyId, nonce, ciphertext: Buffer.concat([body, cipher.getAuthTag()]) };
}

export function openSecret(keyring: Keyring, credentialId: string, sealed: SealedSecret): CredentialSecret {
  const key = keyring.keys.get(sealed.keyId);
  if (!key)
    throw new CredentialDecryptionError(
      `credential ${credentialId} is sealed with key ${sealed.keyId}, which is not loaded`,
    );
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.nonce);
    decipher.setAAD(Buffer.from(credentialId, 'utf8'));
    decipher.setAuthTag(sealed.ciphertext.subarray(sealed.ciphertext.length - TAG_BYTES));
    const plain = Buffer.concat([
      decipher.update(sealed.ciphertext.subarray(0, sealed.ciphertext.length - TAG_BYTES)),
      decipher.final(),
    ]);
    return JSON.parse(plain.toString('utf8')) as CredentialSecret;
  } catch (err) {
    // The cause is a crypto error without secret material (authentication failure).
    throw new CredentialDecryptionError(
      `credential ${credentialId} cannot be decrypted with key ${sealed.keyId}`,
      { cause: err },
    );
  }
}

/** Whether a sealed secret should be re-sealed with the active key (rotation). */
export function needsResealing(keyring: Keyring, sealed: Pick<SealedSecret, 'keyId'>): boolean {
  return sealed.keyId !== keyring.activeKeyId;
}
