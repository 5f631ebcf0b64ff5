import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateKeyringJson, parseKeyring, SealError } from '@capstan/sealing';
import { openCredentialSecret, sealCredentialSecret } from './credential-seal.js';

const keyring = parseKeyring(generateKeyringJson('k1'));
const CANARY = `canary-${randomBytes(6).toString('hex')}`;
const rowOf = (id: string, s: ReturnType<typeof sealCredentialSecret>) => ({
  id,
  key_id: s.keyId,
  nonce: s.nonce,
  ciphertext: s.ciphertext,
});

describe('credential secrets at rest', () => {
  it('round-trips the secret parts as JSON', () => {
    const sealed = sealCredentialSecret(keyring, 'cred-1', { password: CANARY, sshPrivateKey: 'k' });
    expect(openCredentialSecret(keyring, rowOf('cred-1', sealed))).toEqual({
      password: CANARY,
      sshPrivateKey: 'k',
    });
  });

  it("does not open another tenant's ciphertext copied onto a credential, and names only the credential", () => {
    const sealed = sealCredentialSecret(keyring, 'cred-team-a', { password: CANARY });
    let err: unknown;
    try {
      openCredentialSecret(keyring, rowOf('cred-team-b', sealed));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SealError);
    expect((err as Error).message).toBe('credential cred-team-b cannot be decrypted with key k1');
    expect(String(err)).not.toContain(CANARY);
  });
});
