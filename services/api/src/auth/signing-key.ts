// The api's keys: the HMAC key of session and API tokens (CAPSTAN_AUTH_SIGNING_KEY) and the Ed25519
// key of delegations (auth.delegation-key). Each is configured, or generated on first start and kept
// in api.signing_keys sealed with the encryption keyring, so every replica and every restart signs
// and verifies with the same key.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { open, seal, type Keyring, type SealedTable } from '@capstan/sealing';
import { ValidationError } from '@capstan/service';
import type { ApiDatabase } from '../support/db.table.js';

const ROW_ID = 'tokens';

/** The generated keys (`tokens`, `delegation`), each bound to `signing-key/<id>`. */
export const sealedSigningKeys: SealedTable = {
  name: 'signing keys',
  schema: 'api',
  table: 'signing_keys',
  idColumn: 'id',
  boundTo: (id) => `signing-key/${id}`,
};

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
  return loadSealedKey(db, keyring, ROW_ID, () => randomBytes(32));
}

/** The key kept under `id`, generated (by whichever replica inserts first) when absent. */
export async function loadSealedKey(
  db: Kysely<ApiDatabase>,
  keyring: Keyring,
  id: string,
  generate: () => Buffer,
): Promise<Uint8Array> {
  const sealed = seal(keyring, sealedSigningKeys.boundTo(id), generate());
  // Replicas starting together: the first insert wins and everyone reads the winner back.
  await db
    .withSchema('api')
    .insertInto('signing_keys')
    .values({
      id,
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
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return open(keyring, sealedSigningKeys.boundTo(id), {
    keyId: row.key_id,
    nonce: row.nonce,
    ciphertext: row.ciphertext,
  });
}
