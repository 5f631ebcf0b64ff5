// A credential's row as a create and a replace write it: the metadata, and the secret sealed with
// the active key for the credential's id (the id is bound into the sealing, so a row cannot be
// moved under another id).
import { randomUUID } from 'node:crypto';
import type { Keyring } from '@capstan/sealing';
import type { CredentialInput } from './credential.js';
import { insertCredential, updateCredential, type RepoDb } from './credential.repository.js';
import type { CredentialRow } from './credential.table.js';
import { normalizeRepoUrl } from './repo-url.js';
import { sealCredentialSecret } from './credential-seal.js';
import { credentialSecretName } from './secret-name.js';

export async function insertSealed(
  trx: RepoDb,
  keyring: Keyring,
  input: CredentialInput,
  creator: { actor: string; origin: 'api' | 'declarative' },
): Promise<CredentialRow> {
  const id = randomUUID();
  return insertCredential(trx, {
    id,
    name: input.name ?? credentialSecretName(input.url, input.project),
    ...storedColumns(keyring, id, input),
    origin: creator.origin,
    created_by: creator.actor,
  });
}

export async function replaceSealed(
  trx: RepoDb,
  keyring: Keyring,
  existing: CredentialRow,
  input: CredentialInput,
): Promise<CredentialRow> {
  return updateCredential(trx, existing.id, storedColumns(keyring, existing.id, input));
}

/** The columns a create and a replace both write: the metadata and the secret sealed for `id`. */
function storedColumns(keyring: Keyring, id: string, input: CredentialInput) {
  const sealed = sealCredentialSecret(keyring, id, input.secret);
  return {
    url: input.url,
    normalized_url: normalizeRepoUrl(input.url),
    project: input.project,
    type: input.type,
    display_name: input.displayName,
    username: input.username,
    insecure: input.insecure,
    enable_oci: Boolean(input.enableOci),
    insecure_oci_force_http: Boolean(input.insecureOciForceHttp),
    has_password: Boolean(input.secret.password),
    has_ssh_private_key: Boolean(input.secret.sshPrivateKey),
    key_id: sealed.keyId,
    nonce: sealed.nonce,
    ciphertext: sealed.ciphertext,
  };
}
