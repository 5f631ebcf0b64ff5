import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ValidationError } from '@capstan/service';
import { generateKeyringJson, loadKeyring, parseKeyring } from './keyring.js';

const settings = {
  value: 'encryption.keys',
  file: 'encryption.key-file',
  env: 'CAPSTAN_API_ENCRYPTION_KEYS',
};
const k1 = Buffer.alloc(32, 1).toString('base64');

async function violationsOf(promise: Promise<unknown>): Promise<{ field: string; description: string }[]> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  return (err as ValidationError).violations.map((v) => ({ field: v.field, description: v.description }));
}

describe('parseKeyring', () => {
  it('loads every key and the active one', () => {
    const k2 = Buffer.alloc(32, 2).toString('base64');
    const keyring = parseKeyring(JSON.stringify({ active: 'k2', keys: { k1, k2 } }));
    expect(keyring.activeKeyId).toBe('k2');
    expect([...keyring.keys.keys()]).toEqual(['k1', 'k2']);
    expect(keyring.keys.get('k1')).toEqual(Buffer.alloc(32, 1));
  });

  it('refuses malformed keyrings with field paths, never quoting a key value', () => {
    expect(() => parseKeyring(JSON.stringify({ active: 'k1', keys: { k1: 'c2hvcnQ=' } }))).toThrow(
      /keyring\.keys\.k1: must be 32 bytes/,
    );
    expect(() => parseKeyring(JSON.stringify({ active: 'k9', keys: { k1 } }))).toThrow(
      /keyring\.active: names key k9, which is not in keys/,
    );
    expect(() => parseKeyring(JSON.stringify({ active: 'k 1', keys: { 'k 1': k1 } }))).toThrow(
      /keyring\.active: must be 1-64 characters/,
    );
    for (const text of [
      JSON.stringify({ active: 'k1', keys: { k1: 'secret-key-material' } }),
      'secret-key-material',
      `{"active":"k1","keys":{"k1":"secret-key-material"`,
    ]) {
      let err: unknown;
      try {
        parseKeyring(text, 'encryption.keys');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ValidationError);
      expect(String(err)).toMatch(/^ValidationError: encryption\.keys/);
      expect(String(err)).not.toContain('secret-key-material');
    }
  });
});

describe('loadKeyring', () => {
  it('names the settings as the service configures them', async () => {
    const bad = JSON.stringify({ active: 'k2', keys: { k1 } });
    const violations = await violationsOf(loadKeyring({ value: bad }, settings));
    expect(violations).toEqual([
      { field: 'encryption.keys.active', description: 'names key k2, which is not in keys' },
    ]);
    expect(JSON.stringify(violations)).not.toContain(k1);
    expect(await violationsOf(loadKeyring({ file: '/nonexistent/keyring.json' }, settings))).toEqual([
      { field: 'encryption.key-file', description: 'cannot be read: ENOENT' },
    ]);
    expect(await violationsOf(loadKeyring({ value: '', file: '' }, settings))).toEqual([
      {
        field: 'encryption.keys',
        description: 'is required (CAPSTAN_API_ENCRYPTION_KEYS or encryption.key-file)',
      },
    ]);
  });

  it('prefers the value and otherwise reads the file, naming the file setting in its errors', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'capstan-keyring-'));
    const file = path.join(dir, 'keyring.json');
    await writeFile(file, generateKeyringJson('from-file'), { mode: 0o600 });
    expect((await loadKeyring({ file }, settings)).activeKeyId).toBe('from-file');
    expect(
      (await loadKeyring({ value: generateKeyringJson('from-value'), file }, settings)).activeKeyId,
    ).toBe('from-value');
    await writeFile(file, '{"active":"k1","keys":{}}');
    expect(await violationsOf(loadKeyring({ file }, settings))).toEqual([
      { field: 'encryption.key-file.active', description: 'names key k1, which is not in keys' },
    ]);
  });
});
