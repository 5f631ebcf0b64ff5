// The keyring: the 256-bit keys a service seals with, each under an id, one of them active. Several
// keys may be loaded so rows sealed before a rotation stay readable; new ciphertext always uses the
// active key. Keys come from a setting's value (the environment or the configuration file) or from a
// file, never from flags (argv is public). Errors name the setting and the field, never key material.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ValidationError } from '@capstan/service';

export interface Keyring {
  activeKeyId: string;
  keys: ReadonlyMap<string, Buffer>;
}

export const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

const keyringSchema = z.object({
  active: z.string().regex(KEY_ID, 'must be 1-64 characters of [A-Za-z0-9._-]'),
  keys: z.record(
    z.string().regex(KEY_ID, 'key ids must be 1-64 characters of [A-Za-z0-9._-]'),
    z
      .string()
      .refine(
        (v) => BASE64.test(v) && Buffer.from(v, 'base64').length === KEY_BYTES,
        'must be 32 bytes, base64',
      ),
  ),
});

/**
 * Parses `{"active":"k2","keys":{"k1":"<base64 32 bytes>","k2":"…"}}`. `source` is the setting the
 * text came from; violations are `<source>.<field>: <what is wrong>`, never a key's value (nor
 * JSON.parse's message, which may quote the text).
 */
export function parseKeyring(text: string, source = 'keyring'): Keyring {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ValidationError([{ field: source, description: 'is not valid JSON' }]);
  }
  const parsed = keyringSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ValidationError(
      parsed.error.issues.map((issue) => ({
        field: [source, ...issue.path.map(String)].join('.'),
        description: issue.message,
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

/** The names of a service's two keyring settings, as its configuration spells them. */
export interface KeyringSettings {
  /** The setting holding the keyring JSON itself, e.g. `encryption.keys`. */
  value: string;
  /** The setting naming a file that holds it, e.g. `encryption.key-file`. */
  file: string;
  /** The environment variable of `value`, named in the error when neither is set. */
  env?: string;
}

/** Loads the keyring from the value setting or, when that is empty, from the file setting. */
export async function loadKeyring(
  source: { value?: string | undefined; file?: string | undefined },
  settings: KeyringSettings,
): Promise<Keyring> {
  if (source.value) return parseKeyring(source.value, settings.value);
  if (source.file) {
    let text: string;
    try {
      text = await readFile(source.file, 'utf8');
    } catch (err) {
      throw new ValidationError(
        [
          {
            field: settings.file,
            description: `cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
          },
        ],
        { cause: err },
      );
    }
    return parseKeyring(text, settings.file);
  }
  const either = settings.env ? `${settings.env} or ${settings.file}` : `or ${settings.file}`;
  throw new ValidationError([{ field: settings.value, description: `is required (${either})` }]);
}

/** A fresh single-key keyring as JSON, for set-up scripts and tests. */
export function generateKeyringJson(keyId = 'k1'): string {
  return JSON.stringify({ active: keyId, keys: { [keyId]: randomBytes(KEY_BYTES).toString('base64') } });
}
