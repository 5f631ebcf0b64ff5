// The migration that moves stored comparison forms to @capstan/policy's normaliser, on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDb, type Kysely } from '@capstan/db';
import { createTestDatabase, type TestDatabase } from '@capstan/test/infra';
import { credentials } from './2026_11_20_0001_credentials.js';
import { watches } from './2026_11_20_0002_watches.js';
import { normalizedUrls } from './2026_12_01_0003_normalized_urls.js';

describe('migration 2026_12_01_0003_normalized_urls', () => {
  let testDb: TestDatabase;
  let db: Kysely<unknown>;

  beforeAll(async () => {
    testDb = await createTestDatabase('capstan_repo_migration');
    db = createDb<unknown>(testDb.url);
    await sql`create schema repo`.execute(db);
    await credentials.up(db);
    await watches.up(db);
  });
  afterAll(async () => {
    await db?.destroy();
    await testDb?.drop();
  });

  const credential = (id: string, url: string, normalized: string, project: string) =>
    sql`insert into repo.credentials (id, name, url, normalized_url, project, type, has_password,
      has_ssh_private_key, origin, key_id, nonce, ciphertext, created_by)
      values (${id}, ${`repo-${id}`}, ${url}, ${normalized}, ${project}, 'git', true, false, 'api', 'k1',
      '\\x00'::bytea, '\\x00'::bytea, 'test')`.execute(db);

  it('recomputes credentials and watches with the shared normaliser, keeping watch state', async () => {
    // The forms the repo service's former normaliser wrote (WHATWG URL: a trailing '/').
    await credential('a', 'https://H.example', 'https://h.example/', 'team-a');
    await credential('b', 'git@h.example:org/Repo.git', 'git@h.example/org/repo', '');
    await sql`insert into repo.watches (repo_url, normalized_url, revision, project, last_sha)
      values ('https://h.example/org/repo/', 'https://h.example/org/repo/', 'main', 'team-a', 'abc'),
             ('https://h.example/org/repo.git', 'https://h.example/org/repo', 'main', 'team-a', 'abc')`.execute(
      db,
    );
    await normalizedUrls.up(db);
    const creds = await sql<{ id: string; normalized_url: string }>`
      select id, normalized_url from repo.credentials order by id`.execute(db);
    expect(creds.rows).toEqual([
      { id: 'a', normalized_url: 'https://h.example' },
      { id: 'b', normalized_url: 'git@h.example/org/repo' },
    ]);
    const ws = await sql<{ normalized_url: string; last_sha: string }>`
      select normalized_url, last_sha from repo.watches`.execute(db);
    expect(ws.rows).toEqual([{ normalized_url: 'https://h.example/org/repo', last_sha: 'abc' }]);
  });

  it('stops, naming both, when two credentials of one scope now name one repository', async () => {
    await credential('c', 'https://h.example/x/', 'https://h.example/x/', 'team-c');
    await credential('d', 'https://h.example/x', 'https://h.example/x', 'team-c');
    await expect(normalizedUrls.up(db)).rejects.toThrow(/repo-c and repo-d name the same repository/);
  });
});
