// The values of argocd-secret keys the api uses (oidc.*: the OIDC client secret that argocd-cm's
// oidc.config names as `$oidc.clientSecret`), sealed with the encryption keyring and bound to
// `settings-secret/<object>/<key>`; the rest of argocd-secret is still never stored. Re-sealed at
// start after a key rotation like every sealed table.
import { sql, type Kysely, type Migration } from 'kysely';

export const settingsSecrets: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table api.settings_secrets (
      id text primary key,
      key_id text not null,
      nonce bytea not null,
      ciphertext bytea not null,
      updated_at timestamptz not null
    )`.execute(db);
  },
};
