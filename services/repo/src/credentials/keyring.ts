// Encryption keys for credentials at rest. Several keys may be loaded so old rows stay readable
// after a rotation; new ciphertext always uses the active key, and each row records the key id it
// was sealed with. Keys come from the environment or a file (never from flags: argv is public).
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ValidationError } from '@capstan/service';

export interface Keyring {
  activeKeyId: string;
  keys: ReadonlyMap<string, Buffer>;
}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

const keyringSchema = z.object({
  active: z.string().regex(KEY_ID, 'must be 1-64 characters of [A-Za-z0-9._-]'),
  keys: z.record(
    z.string().regex(KEY_ID, 'key ids must be 1-64 characters of [A-Za-z0-9._-]'),
    z
      .string()
      .refine(
        (v) => Buffer.from(v, 'base64').length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(v),
        'must be 32 bytes, base64',
      ),
  ),
});

/**
 * Parses `{"active":"k2","keys":{"k1":"<base64 32 bytes>","k2":"…"}}`. Errors name the field,
 * never a key's value.
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

/** Loads the keyring from an environment variable's value or, if that is empty, from a file. */
export async function loadKeyring(opts: {
  value?: string | undefined;
  file?: string | undefined;
}): Promise<Keyring> {
  if (opts.value) return parseKeyring(opts.value, 'credentials.encryption-keys');
  if (opts.file) {
    let text: string;
    try {
      text = await readFile(opts.file, 'utf8');
    } catch (err) {
      throw new ValidationError(
        [
          {
            field: 'credentials.encryption-key-file',
            description: `cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
          },
        ],
        { cause: err },
      );
    }
    return parseKeyring(text, 'credentials.encryption-key-file');
  }
  throw new ValidationError([
    { field: 'credentials.encryption-keys', description: 'is required (or credentials.encryption-key-file)' },
  ]);
}
