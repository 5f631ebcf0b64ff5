import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDb, migrateAudit, migrateToLatest, type Kysely } from '@capstan/db';
import { eventStoreMigrations, type EventStoreDatabase } from '@capstan/events';
import { generateKeyringJson, parseKeyring } from '@capstan/sealing';
import { createLogger } from '@capstan/service';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestDatabase, type TestDatabase } from '@capstan/test/infra';
import { CheckoutStore } from '../checkouts/checkout-store.js';
import { CredentialService } from '../credentials/credential-service.js';
import type { RepoDb } from '../credentials/credential.repository.js';
import type { RepoDatabase } from '../credentials/credential.table.js';
import { repoMigrations } from '../migrations/index.js';
import { ChangeDetector } from './change-detector.js';
import { listWatches, touchWatch } from './watch.repository.js';
import { LOCAL_GIT_EGRESS } from '../test-support/egress.js';

describe('ChangeDetector on PostgreSQL and a real git server', () => {
  let testDb: TestDatabase;
  let db: Kysely<RepoDatabase & EventStoreDatabase>;
  let git: GitServer;
  let repo: TestRepository;
  let cacheDir: string;
  let detector: ChangeDetector;

  beforeAll(async () => {
    testDb = await createTestDatabase('capstan_repo_changes');
    db = createDb<RepoDatabase & EventStoreDatabase>(testDb.url);
    await migrateAudit(db as unknown as Kysely<unknown>);
    await migrateToLatest(db, {
      schema: 'repo',
      migrations: { ...eventStoreMigrations('repo'), ...repoMigrations },
    });
    git = await startGitServer();
    repo = await git.createRepository('watched.git', { credentials: [{ username: 'a', password: 'pw-a' }] });
    await repo.commit({ 'app/a.yaml': 'a: 1\n' });
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'capstan-changes-'));
    const keyring = parseKeyring(generateKeyringJson());
    const credentials = new CredentialService(db as unknown as Kysely<RepoDatabase>, keyring);
    await credentials.create(
      {
        url: repo.url,
        project: 'team-a',
        type: 'git',
        displayName: '',
        username: 'a',
        insecure: false,
        secret: { password: 'pw-a' },
      },
      { actor: 'user:admin' },
    );
    const checkouts = await CheckoutStore.create({
      cacheDir,
      maxCacheBytes: 1e9,
      maxRepoBytes: 1e9,
      refCacheTtlMs: 60_000,
      gitTimeoutMs: 30_000,
      egress: LOCAL_GIT_EGRESS,
    });
    detector = new ChangeDetector({
      db,
      schema: 'repo',
      credentials,
      checkouts,
      logger: createLogger('repo-test', { level: 'silent' }),
    });
    await touchWatch(db as unknown as RepoDb, { repoURL: repo.url, revision: 'main', project: 'team-a' });
    // team-b has no credential for this private repository: its checks fail, the others go on.
    await touchWatch(db as unknown as RepoDb, { repoURL: repo.url, revision: 'main', project: 'team-b' });
  });
  afterAll(async () => {
    await db?.destroy();
    await testDb?.drop();
    await git?.close();
    await rm(cacheDir, { recursive: true, force: true });
  });

  const outboxEvents = async () =>
    (
      await sql<{
        envelope: {
          type: string;
          data: { sha: string; previousSha: string | null; project: string; detectedBy: string };
        };
      }>`select envelope from repo.events order by position`.execute(db)
    ).rows.map((r) => r.envelope);

  it('announces the first resolution, stays quiet while nothing moves, and announces each new commit', async () => {
    expect(await detector.check({ detectedBy: 'poll' })).toEqual({ checked: 2, changed: 1, failed: 1 });
    const first = await repo.sha('main');
    expect((await outboxEvents()).map((e) => e.data)).toEqual([
      expect.objectContaining({ sha: first, previousSha: null, project: 'team-a', detectedBy: 'poll' }),
    ]);

    // The cached resolution is dropped for every check: a commit is seen without waiting for the TTL.
    expect(await detector.check({ detectedBy: 'poll' })).toMatchObject({ changed: 0 });
    const second = await repo.commit({ 'app/a.yaml': 'a: 2\n' });
    expect(await detector.check({ repoURL: repo.url, detectedBy: 'push' })).toMatchObject({ changed: 1 });
    const events = await outboxEvents();
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({
      type: 'io.capstan.repository.revision-changed.v1',
      data: { sha: second, previousSha: first, detectedBy: 'push' },
    });
    expect((await listWatches(db as unknown as RepoDb)).find((w) => w.project === 'team-a')?.lastSha).toBe(
      second,
    );
  });

  it('re-checks only the named target revisions when a push names them (the git webhook)', async () => {
    await touchWatch(db as unknown as RepoDb, { repoURL: repo.url, revision: 'release', project: 'team-a' });
    await repo.commit({ 'app/a.yaml': 'a: 3\n' }, { branch: 'release' });
    // A push of main: the release watch is not even looked at (team-a main and team-b main are).
    expect(await detector.check({ repoURL: repo.url, revisions: ['main'], detectedBy: 'push' })).toEqual({
      checked: 2,
      changed: 0,
      failed: 1,
    });
    expect(
      (await listWatches(db as unknown as RepoDb)).find((w) => w.revision === 'release')?.lastSha,
    ).toBeNull();
    // Nothing to re-check: no watch of that revision.
    expect(await detector.check({ repoURL: repo.url, revisions: [], detectedBy: 'push' })).toEqual({
      checked: 0,
      changed: 0,
      failed: 0,
    });
    expect(await detector.check({ repoURL: repo.url, revisions: ['release'], detectedBy: 'push' })).toEqual({
      checked: 1,
      changed: 1,
      failed: 0,
    });
  });
});
