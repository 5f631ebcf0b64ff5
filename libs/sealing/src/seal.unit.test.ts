import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseKeyring } from './keyring.js';
import { needsResealing, open, openJson, resealWithActiveKey, seal, sealJson, SealError } from './seal.js';

const k1 = randomBytes(32).toString('base64');
const k2 = randomBytes(32).toString('base64');
const ring = (active: string, keys: Record<string, string>) => parseKeyring(JSON.stringify({ active, keys }));
const CANARY = `canary-${randomBytes(6).toString('hex')}`;

describe('seal and open', () => {
  it('round-trips with the active key id beside a ciphertext that does not hold the plaintext', () => {
    const keyring = ring('k1', { k1 });
    const sealed = seal(keyring, 'cred-1', Buffer.from(CANARY));
    expect(sealed.keyId).toBe('k1');
    expect(sealed.nonce).toHaveLength(12);
    expect(sealed.ciphertext).toHaveLength(CANARY.length + 16);
    expect(sealed.ciphertext.toString('latin1')).not.toContain(CANARY);
    expect(open(keyring, 'cred-1', sealed).toString()).toBe(CANARY);
    // A fresh nonce every time: the same plaintext never gives the same ciphertext.
    expect(seal(keyring, 'cred-1', Buffer.from(CANARY)).ciphertext.equals(sealed.ciphertext)).toBe(false);
  });

  it('round-trips JSON', () => {
    const keyring = ring('k1', { k1 });
    const sealed = sealJson(keyring, 'https://10.0.0.1:6443', { bearerToken: CANARY });
    expect(openJson(keyring, 'https://10.0.0.1:6443', sealed)).toEqual({ bearerToken: CANARY });
  });

  it('refuses a ciphertext moved onto another row (additional data mismatch)', () => {
    const keyring = ring('k1', { k1 });
    const sealed = seal(keyring, 'cred-team-a', Buffer.from(CANARY));
    expect(() => open(keyring, 'cred-team-b', sealed)).toThrow(SealError);
    expect(() => open(keyring, 'cred-team-b', sealed, 'credential cred-team-b')).toThrow(
      'credential cred-team-b cannot be decrypted with key k1',
    );
  });

  it('refuses a tampered ciphertext, tag or nonce', () => {
    const keyring = ring('k1', { k1 });
    const sealed = seal(keyring, 'row', Buffer.from(CANARY));
    const flip = (b: Buffer, i: number) => {
      const c = Buffer.from(b);
      c[i] = c[i]! ^ 1;
      return c;
    };
    expect(() => open(keyring, 'row', { ...sealed, ciphertext: flip(sealed.ciphertext, 0) })).toThrow(
      /row cannot be decrypted with key k1/,
    );
    const last = sealed.ciphertext.length - 1;
    expect(() => open(keyring, 'row', { ...sealed, ciphertext: flip(sealed.ciphertext, last) })).toThrow(
      SealError,
    );
    expect(() => open(keyring, 'row', { ...sealed, nonce: flip(sealed.nonce, 3) })).toThrow(SealError);
    expect(() => open(keyring, 'row', { ...sealed, ciphertext: sealed.ciphertext.subarray(0, 10) })).toThrow(
      /malformed ciphertext/,
    );
  });

  it('refuses a row that names a key id it was not sealed with', () => {
    const keyring = ring('k1', { k1, k2 });
    const sealed = seal(keyring, 'row', Buffer.from(CANARY));
    expect(() => open(keyring, 'row', { ...sealed, keyId: 'k2' })).toThrow(
      'row cannot be decrypted with key k2',
    );
  });

  it('names a key that is not loaded, and never any material', () => {
    const sealed = seal(ring('k1', { k1 }), 'row', Buffer.from(CANARY));
    let err: unknown;
    try {
      open(ring('k2', { k2 }), 'row', sealed, 'signing key row');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SealError);
    expect((err as SealError).code).toBe('INTERNAL');
    expect((err as Error).message).toBe('signing key row is sealed with key k1, which is not loaded');
    expect(JSON.stringify(err) + String(err)).not.toContain(k1);
    expect(String(err)).not.toContain(CANARY);
  });

  it('does not quote a non-JSON plaintext', () => {
    const keyring = ring('k1', { k1 });
    const sealed = seal(keyring, 'row', Buffer.from(CANARY));
    expect(() => openJson(keyring, 'row', sealed)).toThrow('row does not hold JSON');
  });
});

describe('rotation', () => {
  it('reads old rows, seals new ones with the active key, and re-seals old ones for the same row', () => {
    const old = sealJson(ring('k1', { k1 }), 'c', { sshPrivateKey: CANARY });
    const rotated = ring('k2', { k1, k2 });
    expect(openJson(rotated, 'c', old)).toEqual({ sshPrivateKey: CANARY });
    expect(needsResealing(rotated, old)).toBe(true);
    expect(sealJson(rotated, 'c', {}).keyId).toBe('k2');

    const resealed = resealWithActiveKey(rotated, 'c', old);
    expect(resealed.keyId).toBe('k2');
    expect(needsResealing(rotated, resealed)).toBe(false);
    // Once re-sealed, the old key can go.
    expect(openJson(ring('k2', { k2 }), 'c', resealed)).toEqual({ sshPrivateKey: CANARY });
    expect(() => open(ring('k2', { k2 }), 'other', resealed)).toThrow(SealError);
  });
});
