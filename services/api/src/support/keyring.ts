// Encryption at rest for cluster credentials and the generated token signing key: AES-256-GCM,
// with the key id stored beside each ciphertext so keys can rotate (old rows stay readable, new
// ones use the active key). The keyring format is the repo service's, so operators configure both
// the same way. The row's identity is bound in as additional data: a ciphertext copied onto another
// row fails to open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CapstanError, ValidationError } from '@capstan/service';
import { z } from 'zod';

export interface Keyring {
  activeKeyId: string;
  keys: ReadonlyMap<string, Buffer>;
}

export interface Sealed {
  keyId: string;
  nonce: Buffer;
  /** Ciphertext followed by the 16-byte GCM tag. */
  ciphertext: Buffer;
}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const schema = z.object({
  active: z.string().regex(KEY_ID, 'must be 1-64 characters of [A-Za-z0-9._-]'),
  keys: z.record(
    z.string().regex(KEY_ID, 'key ids must be 1-64 characters of [A-Za-z0-9._-]'),
    z
      .string()
      .refine(
        (v) => /^[A-Za-z0-9+/]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length === 32,
        'must be 32 bytes, base64',
      ),
  ),
});

export class SealError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INTERNAL', message, options);
  }
}

/** Parses `{"active":"k1","keys":{"k1":"<base64 32 bytes>"}}`; errors name fields, never key material. */
export function parseKeyring(text: string, source: string): Keyring {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ValidationError([{ field: source, description: 'is not valid JSON' }]);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new ValidationError(
      parsed.error.issues.map((i) => ({
        field: [source, ...i.path.map(String)].join('.'),
        description: i.message,
      })),
    );
  }
  const keys = new Map(Object.entries(parsed.data.keys).map(([id, b64]) => [id, Buffer.from(b64, 'base64')]));
  if (!keys.has(parsed.data.active)) {
    throw new ValidationError([
      { field: `${source}.active`, description: `names key ${parsed.data.active}, which is not in keys` },
    ]);
  }
  return { activeKeyId: parsed.data.active, keys };
}

export function loadKeyring(value: string, file: string): Keyring {
  if (value) return parseKeyring(value, 'encryption.keys');
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ValidationError([
        {
          field: 'encryption.key-file',
          description: `cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
        },
      ]);
    }
    return parseKeyring(text, 'encryption.key-file');
  }
  throw new ValidationError([
    {
      field: 'encryption.keys',
      description: 'is required (CAPSTAN_API_ENCRYPTION_KEYS or encryption.key-file)',
    },
  ]);
}

/** A fresh single-key keyring as JSON, for set-up scripts and tests. */
export function generateKeyringJson(keyId = 'k1'): string {
  return JSON.stringify({ active: keyId, keys: { [keyId]: randomBytes(32).toString('base64') } });
}

const TAG = 16;

export function seal(keyring: Keyring, boundTo: string, plaintext: Buffer): Sealed {
  const key = keyring.keys.get(keyring.activeKeyId);
  if (!key) throw new SealError(`active encryption key ${keyring.activeKeyId} is not loaded`);
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(boundTo, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { keyId: keyring.activeKeyId, nonce, ciphertext: Buffer.concat([body, cipher.getAuthTag()]) };
}

export function open(keyring: Keyring, boundTo: string, sealed: Sealed): Buffer {
  const key = keyring.keys.get(sealed.keyId);
  if (!key) throw new SealError(`${boundTo} is sealed with key ${sealed.keyId}, which is not loaded`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.nonce);
    decipher.setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(sealed.ciphertext.subarray(sealed.ciphertext.length - TAG));
    return Buffer.concat([
      decipher.update(sealed.ciphertext.subarray(0, sealed.ciphertext.length - TAG)),
      decipher.final(),
    ]);
  } catch (err) {
    throw new SealError(`${boundTo} cannot be decrypted with key ${sealed.keyId}`, { cause: err });
  }
}
