import { describe, expect, it } from 'vitest';
import { ValidationError } from '@capstan/service';
import { loadKeyring } from './keyring.js';

async function violationsOf(promise: Promise<unknown>): Promise<{ field: string; description: string }[]> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  return (err as ValidationError).violations.map((v) => ({ field: v.field, description: v.description }));
}

describe('loadKeyring', () => {
  it('names the settings as they are configured, never a key value', async () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const bad = JSON.stringify({ active: 'k2', keys: { k1: key } });
    const violations = await violationsOf(loadKeyring({ value: bad }));
    expect(violations).toEqual([
      { field: 'credentials.encryption-keys.active', description: 'names key k2, which is not in keys' },
    ]);
    expect(JSON.stringify(violations)).not.toContain(key);
    expect(await violationsOf(loadKeyring({ file: '/nonexistent/keyring.json' }))).toEqual([
      { field: 'credentials.encryption-key-file', description: 'cannot be read: ENOENT' },
    ]);
    expect((await violationsOf(loadKeyring({})))[0]?.field).toBe('credentials.encryption-keys');
  });

  it('loads the active key', async () => {
    const key = Buffer.alloc(32, 1).toString('base64');
    const keyring = await loadKeyring({ value: JSON.stringify({ active: 'k1', keys: { k1: key } }) });
    expect(keyring.activeKeyId).toBe('k1');
    expect(keyring.keys.get('k1')).toEqual(Buffer.alloc(32, 1));
  });
});
