// The argocd-secret keys the api uses, kept sealed (api.settings_secrets, @capstan/sealing): today
// `oidc.*`, which argocd-cm's oidc.config names as `$oidc.clientSecret` (docs/sso.md). Written in the
// transaction of the apply that brings them; an apply of argocd-secret without a key removes it (an
// apply replaces the whole object). No other argocd-secret value is stored anywhere.
import type { Transaction, Kysely } from 'kysely';
import { open, seal, type Keyring, type SealedTable } from '@capstan/sealing';
import type { ApiDatabase } from '../support/db.table.js';

/** Whether the api keeps this key of `object` (sealed). */
export const isKeptSecret = (object: string, key: string): boolean =>
  object === 'argocd-secret' && /^oidc\.[A-Za-z0-9._-]+$/.test(key);

export const sealedSettingsSecrets: SealedTable = {
  name: 'settings secrets',
  schema: 'api',
  table: 'settings_secrets',
  idColumn: 'id',
  boundTo: (id) => `settings-secret/${id}`,
};

/** Replaces the kept keys of `object` with those of `data`, sealed. */
export async function keepSecrets(
  trx: Transaction<ApiDatabase>,
  keyring: Keyring,
  object: string,
  data: Readonly<Record<string, string>>,
  at: Date,
): Promise<void> {
  await trx.withSchema('api').deleteFrom('settings_secrets').where('id', 'like', `${object}/%`).execute();
  for (const [key, value] of Object.entries(data)) {
    if (!isKeptSecret(object, key)) continue;
    const id = `${object}/${key}`;
    const sealed = seal(keyring, sealedSettingsSecrets.boundTo(id), Buffer.from(value, 'utf8'));
    await trx
      .withSchema('api')
      .insertInto('settings_secrets')
      .values({
        id,
        key_id: sealed.keyId,
        nonce: sealed.nonce,
        ciphertext: sealed.ciphertext,
        updated_at: at,
      })
      .execute();
  }
}

/** The kept value of `<object>/<key>`, or undefined. */
export async function keptSecret(
  db: Kysely<ApiDatabase>,
  keyring: Keyring,
  object: string,
  key: string,
): Promise<string | undefined> {
  const id = `${object}/${key}`;
  const row = await db
    .withSchema('api')
    .selectFrom('settings_secrets')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  return Buffer.from(
    open(keyring, sealedSettingsSecrets.boundTo(id), {
      keyId: row.key_id,
      nonce: row.nonce,
      ciphertext: row.ciphertext,
    }),
  ).toString('utf8');
}
