// The values of sensitive Argo CD keys that Capstan implements (argocd-secret's webhook.* secrets and
// oidc.* keys, which oidc.config names as `$oidc.clientSecret`): sealed with the api's keyring into
// api.settings_secrets in the same transaction as the settings version that names them (an apply
// replaces the whole object: a key it leaves out is removed), re-sealed at start on key rotation,
// read back by the webhook per delivery and by single sign-on per login.
// Keys Capstan does not implement are never stored (only their names, in api.settings).
import type { Kysely, Transaction } from 'kysely';
import { open, seal, type Keyring, type SealedTable } from '@capstan/sealing';
import { argoKeySpec, type ArgoConfigObject } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';

/** api.settings_secrets rows, each bound to `settings-secret/<object>/<key>`. */
export const sealedSettingsSecrets: SealedTable = {
  name: 'settings secrets',
  schema: 'api',
  table: 'settings_secrets',
  idColumn: 'id',
  boundTo: (id) => `settings-secret/${id}`,
};

/** Whether a key's value is kept (sealed): sensitive and implemented by a Capstan setting. */
export function keepsSealedValue(object: ArgoConfigObject, key: string): boolean {
  const spec = argoKeySpec(object, key);
  return (
    (object === 'argocd-secret' || object === 'argocd-notifications-secret') && spec?.capstan !== undefined
  );
}

/** Makes the sealed values of `object` those of `data` (kept keys only): upserts, then removes the rest. */
export async function storeSealedValues(
  trx: Transaction<ApiDatabase>,
  keyring: Keyring,
  object: ArgoConfigObject,
  data: Readonly<Record<string, string>>,
): Promise<void> {
  const kept = Object.keys(data).filter((k) => keepsSealedValue(object, k));
  const at = new Date();
  for (const key of kept) {
    const id = `${object}/${key}`;
    const sealed = seal(keyring, sealedSettingsSecrets.boundTo(id), Buffer.from(data[key]!, 'utf8'));
    const row = { key_id: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext, updated_at: at };
    await trx
      .withSchema('api')
      .insertInto('settings_secrets')
      .values({ id, object, key, ...row })
      .onConflict((oc) => oc.column('id').doUpdateSet(row))
      .execute();
  }
  let remove = trx.withSchema('api').deleteFrom('settings_secrets').where('object', '=', object);
  if (kept.length > 0) remove = remove.where('key', 'not in', kept);
  await remove.execute();
}

/** The sealed values of `object`, opened: key → value. */
export async function readSealedValues(
  db: Kysely<ApiDatabase>,
  keyring: Keyring,
  object: ArgoConfigObject,
): Promise<Map<string, string>> {
  const rows = await db
    .withSchema('api')
    .selectFrom('settings_secrets')
    .select(['id', 'key', 'key_id', 'nonce', 'ciphertext'])
    .where('object', '=', object)
    .execute();
  const out = new Map<string, string>();
  for (const r of rows) {
    const sealed = { keyId: r.key_id, nonce: r.nonce, ciphertext: r.ciphertext };
    out.set(
      r.key,
      open(keyring, sealedSettingsSecrets.boundTo(r.id), sealed, `settings secret ${r.id}`).toString('utf8'),
    );
  }
  return out;
}

/** One sealed value (`argocd-secret`, `oidc.clientSecret`), opened; undefined when not applied. */
export async function readSealedValue(
  db: Kysely<ApiDatabase>,
  keyring: Keyring,
  object: ArgoConfigObject,
  key: string,
): Promise<string | undefined> {
  return (await readSealedValues(db, keyring, object)).get(key);
}
