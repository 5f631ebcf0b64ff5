// How a credential's secret parts are sealed in repo.credentials (the mechanism is @capstan/sealing):
// UTF-8 JSON, the credential id bound in as additional authenticated data, so a ciphertext copied
// onto another row (another tenant's credential) fails to open instead of silently lending its secret.
import { openJson, sealJson, type Keyring, type Sealed, type SealedTable } from '@capstan/sealing';
import type { CredentialSecret } from './credential.js';
import type { CredentialRow } from './credential.table.js';

/** The sealed rows of repo.credentials, for re-sealing after a key rotation. */
export const sealedCredentials: SealedTable = {
  name: 'repository credentials',
  schema: 'repo',
  table: 'credentials',
  idColumn: 'id',
  boundTo: (id) => id,
  label: (id) => `credential ${id}`,
};

export function sealCredentialSecret(keyring: Keyring, id: string, secret: CredentialSecret): Sealed {
  return sealJson(keyring, sealedCredentials.boundTo(id), secret);
}

export function openCredentialSecret(
  keyring: Keyring,
  row: Pick<CredentialRow, 'id' | 'key_id' | 'nonce' | 'ciphertext'>,
): CredentialSecret {
  const sealed = { keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext };
  return openJson(
    keyring,
    sealedCredentials.boundTo(row.id),
    sealed,
    sealedCredentials.label!(row.id),
  ) as CredentialSecret;
}
