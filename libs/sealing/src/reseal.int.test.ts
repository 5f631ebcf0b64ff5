import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDb, type Kysely } from '@capstan/db';
import { createTestDatabase, type TestDatabase } from '@capstan/test/infra';
import { parseKeyring } from './keyring.js';
import { resealAtStartup, resealRows, type SealedTable } from './reseal.js';
import { openJson, SealError, sealJson, type Sealed } from './seal.js';

const k1 = randomBytes(32).toString('base64');
const k2 = randomBytes(32).toString('base64');
const ring = (active: string, keys: Record<string, string>) => parseKeyring(JSON.stringify({ active, keys }));
const secrets: SealedTable = {
  name: 'secrets',
  schema: 'vault',
  table: 'secrets',
  idColumn: 'name',
  boundTo: (id) => `secret/${id}`,
  label: (id) => `secret ${id}`,
};

describe('resealRows on PostgreSQL', () => {
  let testDb: TestDatabase;
  let db: Kysely<unknown>;

  const put = async (name: string, s: Sealed) =>
    sql`insert into vault.secrets (name, key_id, nonce, ciphertext, updated_at)
        values (${name}, ${s.keyId}, ${s.nonce}, ${s.ciphertext}, '2026-01-01T00:00:00Z')`.execute(db);
  const rows = async () =>
    (
      await sql<{ name: string; key_id: string; nonce: Buffer; ciphertext: Buffer; updated_at: Date }>`
        select * from vault.secrets order by name`.execute(db)
    ).rows;

  beforeAll(async () => {
    testDb = await createTestDatabase('capstan_sealing');
    db = createDb<unknown>(testDb.url);
    await sql`create schema vault`.execute(db);
    await sql`create table vault.secrets (name text primary key, key_id text not null, nonce bytea not null,
      ciphertext bytea not null, updated_at timestamptz not null)`.execute(db);
  });
  afterAll(async () => {
    await db?.destroy();
    await testDb?.drop();
  });

  it('re-seals only rows sealed with another key, then opens them without the old key', async () => {
    const before = ring('k1', { k1 });
    for (const name of ['a', 'b', 'c']) await put(name, sealJson(before, `secret/${name}`, { value: name }));
    const rotated = ring('k2', { k1, k2 });
    await put('d', sealJson(rotated, 'secret/d', { value: 'd' }));
    const dBefore = (await rows()).find((r) => r.name === 'd')!;

    const logged: unknown[][] = [];
    const logger = { info: (...args: unknown[]) => void logged.push(args) };
    expect(await resealAtStartup(db, rotated, [secrets], logger)).toEqual({ secrets: 3 });
    // Counts and the key id only: no key, no plaintext.
    expect(logged).toEqual([
      [{ resealed: { secrets: 3 }, activeKeyId: 'k2' }, 'sealed rows re-sealed with the active key'],
    ]);
    expect(await resealRows(db, rotated, secrets)).toBe(0);
    await resealAtStartup(db, rotated, [secrets], logger);
    expect(logged).toHaveLength(1);

    const after = await rows();
    expect(after.map((r) => r.key_id)).toEqual(['k2', 'k2', 'k2', 'k2']);
    // The row already on the active key is untouched; nothing else of a row changes.
    expect(after.find((r) => r.name === 'd')!.ciphertext.equals(dBefore.ciphertext)).toBe(true);
    expect(after.every((r) => r.updated_at.toISOString() === '2026-01-01T00:00:00.000Z')).toBe(true);
    const onlyK2 = ring('k2', { k2 });
    for (const r of after)
      expect(
        openJson(onlyK2, `secret/${r.name}`, { keyId: r.key_id, nonce: r.nonce, ciphertext: r.ciphertext }),
      ).toEqual({ value: r.name });
  });

  it('stops at a row it cannot open, naming it and the missing key, leaving it as it was', async () => {
    await sql`delete from vault.secrets`.execute(db);
    await put('lost', sealJson(ring('k0', { k0: randomBytes(32).toString('base64') }), 'secret/lost', {}));
    const err = await resealRows(db, ring('k2', { k1, k2 }), secrets).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SealError);
    expect((err as Error).message).toBe('secret lost is sealed with key k0, which is not loaded');
    expect((await rows()).map((r) => r.key_id)).toEqual(['k0']);
  });
});
