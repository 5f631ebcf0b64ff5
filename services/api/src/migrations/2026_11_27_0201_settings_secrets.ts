// The values of the sensitive Argo CD keys Capstan implements (argocd-secret's webhook.* secrets),
// sealed with the api's keyring (@capstan/sealing, bound to `settings-secret/<id>`). Only the latest
// value of each key: versions and audit rows keep key names only.
import { sql, type Kysely, type Migration } from 'kysely';

export const settingsSecrets: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table api.settings_secrets (
      id text primary key,
      object text not null,
      key text not null,
      key_id text not null,
      nonce bytea not null,
      ciphertext bytea not null,
      updated_at timestamptz not null
    )`.execute(db);
  },
};
