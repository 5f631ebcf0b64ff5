import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseKeyring } from './keyring.js';
import { CredentialDecryptionError, needsResealing, openSecret, sealSecret } from './sealed-secret.js';

const k1 = randomBytes(32).toString('base64');
const k2 = randomBytes(32).toString('base64');

describe('sealed credential secrets', () => {
  it('round-trips and records the key id', () => {
    const keyring = parseKeyring(JSON.stringify({ active: 'k1', keys: { k1 } }));
    const sealed = sealSecret(keyring, 'cred-1', { password: 'canary-pw' });
    expect(sealed.keyId).toBe('k1');
    expect(sealed.ciphertext.toString('utf8')).not.toContain('canary-pw');
    expect(openSecret(keyring, 'cred-1', sealed)).toEqual({ password: 'canary-pw' });
  });

  it('refuses a ciphertext moved onto another credential', () => {
    const keyring = parseKeyring(JSON.stringify({ active: 'k1', keys: { k1 } }));
    const sealed = sealSecret(keyring, 'cred-team-a', { password: 'a' });
    expect(() => openSecret(keyring, 'cred-team-b', sealed)).toThrow(CredentialDecryptionError);
  });

  it('reads old rows after rotation and seals new ones with the active key', () => {
    const before = parseKeyring(JSON.stringify({ active: 'k1', keys: { k1 } }));
    const old = sealSecret(before, 'c', { sshPrivateKey: 'x' });
    const after = parseKeyring(JSON.stringify({ active: 'k2', keys: { k1, k2 } }));
    expect(openSecret(after, 'c', old)).toEqual({ sshPrivateKey: 'x' });
    expect(needsResealing(after, old)).toBe(true);
    expect(sealSecret(after, 'c', {}).keyId).toBe('k2');
  });

  it('names a missing key without leaking material', () => {
    const sealed = sealSecret(parseKeyring(JSON.stringify({ active: 'k1', keys: { k1 } })), 'c', {
      password: 'p',
    });
    const other = parseKeyring(JSON.stringify({ active: 'k2', keys: { k2 } }));
    expect(() => openSecret(other, 'c', sealed)).toThrow(/sealed with key k1, which is not loaded/);
  });

  it('rejects malformed keyrings with field paths and without quoting key values', () => {
    expect(() => parseKeyring(JSON.stringify({ active: 'k1', keys: { k1: 'c2hvcnQ=' } }))).toThrow(
      /keyring\.keys\.k1: must be 32 bytes/,
    );
    expect(() => parseKeyring(JSON.stringify({ active: 'k9', keys: { k1 } }))).toThrow(
      /keyring\.active: names key k9/,
    );
    try {
      parseKeyring(JSON.stringify({ active: 'k1', keys: { k1: 'secret-key-material' } }));
    } catch (err) {
      expect(String(err)).not.toContain('secret-key-material');
    }
  });
});
