// The HMAC key for session and API tokens: configured (CAPSTAN_AUTH_SIGNING_KEY), or generated on
// first start and kept in api.signing_keys sealed with the encryption keyring, so every replica and
// every restart signs and verifies with the same key.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ValidationError } from '@capstan/service';
import type { ApiDatabase } from '../support/db.table.js';
import { open, seal, type Keyring } from '../support/keyring.js';

const ROW_ID = 'tokens';

export async function loadSigningKey(
  db: Kysely<ApiDatabase>,
  keyring: Keyring,
  configured: string,
): Promise<Uint8Array> {
  if (configured) {
    const key = Buffer.from(configured, 'base64');
    if (key.length < 32)
      throw new ValidationError([
        { field: 'auth.signing-key', description: 'must be at least 32 bytes, base64' },
      ]);
    return key;
  }
  const sealed = seal(keyring, `signing-key/${ROW_ID}`, randomBytes(32));
  // Replicas starting together: the first insert wins and everyone reads the winner back.
  await db
    .withSchema('api')
    .insertInto('signing_keys')
    .values({
      id: ROW_ID,
      key_id: sealed.keyId,
      nonce: sealed.nonce,
      ciphertext: sealed.ciphertext,
      created_at: new Date(),
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const row = await db
    .withSchema('api')
    .selectFrom('signing_keys')
    .selectAll()
    .where('id', '=', ROW_ID)
    .executeTakeFirstOrThrow();
  return open(keyring, `signing-key/${ROW_ID}`, {
    keyId: row.key_id,
    nonce: row.nonce,
    ciphertext: row.ciphertext,
  });
}
