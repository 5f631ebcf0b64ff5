import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDb, migrateAudit, migrateToLatest, verifyAuditChain, type Kysely } from '@capstan/db';
import {
  AlreadyExistsError,
  ConcurrencyError,
  FailedPreconditionError,
  NotFoundError,
  ValidationError,
} from '@capstan/service';
import { createTestDatabase, type TestDatabase } from '@capstan/test/infra';
import { repoMigrations } from '../migrations/index.js';
import type { RepoDatabase } from './credential.table.js';
import { CredentialService } from './credential-service.js';
import { parseKeyring, resealRows } from '@capstan/sealing';
import { sealedCredentials } from './credential-seal.js';

const CANARY = `canary-${randomBytes(6).toString('hex')}`;
const K1 = randomBytes(32).toString('base64');
const K2 = randomBytes(32).toString('base64');
const URL_SHARED = 'https://git.example.com/shared/apps.git';
const admin = { actor: 'user:admin' };

describe('CredentialService on PostgreSQL', () => {
  let testDb: TestDatabase;
  let db: Kysely<RepoDatabase>;
  let service: CredentialService;

  beforeAll(async () => {
    testDb = await createTestDatabase('capstan_repo');
    db = createDb<RepoDatabase>(testDb.url);
    await migrateAudit(db as unknown as Kysely<unknown>);
    await migrateToLatest(db, { schema: 'repo', migrations: repoMigrations });
    service = new CredentialService(db, parseKeyring(JSON.stringify({ active: 'k1', keys: { k1: K1 } })));
  });
  afterAll(async () => {
    await db?.destroy();
    await testDb?.drop();
  });

  const input = (project: string, password: string, url = URL_SHARED) => ({
    url,
    project,
    type: 'git' as const,
    displayName: '',
    username: `bot-${project || 'global'}`,
    insecure: false,
    secret: { password },
  });
  const lookup = async (
    req: { url: string; project: string; application: string | null },
    caller: { actor: string },
  ) => {
    const result = await service.lookupForApplication(req, caller);
    await result.recorded;
    return result;
  };
  const decisions = async () =>
    (
      await sql<{
        operation: string;
        reason: string;
        outcome: string;
        chosen_id: string | null;
        project: string | null;
        candidates: unknown;
        message: string | null;
      }>`select * from audit.credential_decisions order by id`.execute(db)
    ).rows;

  it('stores per-project credentials for one URL under Argo CD names, encrypted', async () => {
    const a = await service.create(input('team-a', CANARY), admin);
    const b = await service.create(input('team-b', 'pw-b'), admin);
    expect(a.name).toBe('repo-' + (await import('./secret-name.js')).fnv1a32(URL_SHARED, 'team-a'));
    expect(b.name).not.toBe(a.name);
    expect(a).toMatchObject({ project: 'team-a', hasPassword: true, username: 'bot-team-a' });
    expect(JSON.stringify(a)).not.toContain(CANARY);
    const raw = await sql<{
      ciphertext: Buffer;
      key_id: string;
    }>`select ciphertext, key_id from repo.credentials where id = ${a.id}`.execute(db);
    expect(raw.rows[0]?.key_id).toBe('k1');
    expect(raw.rows[0]?.ciphertext.toString('latin1')).not.toContain(CANARY);
  });

  it('refuses a second credential for the same URL and project', async () => {
    await expect(service.create(input('team-a', 'other'), admin)).rejects.toBeInstanceOf(AlreadyExistsError);
    await expect(
      service.create(input('team-a', 'x', 'HTTPS://git.example.com/shared/apps'), admin),
    ).rejects.toBeInstanceOf(AlreadyExistsError);
  });

  it('selects the project credential, falls back to the unscoped one, else anonymous', async () => {
    const a = await lookup(
      { url: URL_SHARED, project: 'team-a', application: 'argocd/guestbook' },
      { actor: 'repo' },
    );
    expect(a.reason).toBe('project-match');
    expect(a.credential?.auth).toMatchObject({ username: 'bot-team-a', password: CANARY });
    const none = await lookup({ url: URL_SHARED, project: 'team-c', application: null }, { actor: 'repo' });
    expect(none).toMatchObject({ credential: null, reason: 'none' });
    const global = await service.create(input('', 'pw-global'), admin);
    const c = await lookup({ url: URL_SHARED, project: 'team-c', application: null }, { actor: 'repo' });
    expect(c).toMatchObject({ credentialId: global.id, reason: 'unscoped-fallback' });
    expect(c.credential?.auth.password).toBe('pw-global');
  });

  it('gets and deletes by the API rules: several need a project, a project must match', async () => {
    await expect(service.get(URL_SHARED, '', admin)).rejects.toThrow(FailedPreconditionError);
    await expect(service.get(URL_SHARED, '', admin)).rejects.toThrow(/name the project/);
    expect((await service.get(URL_SHARED, 'team-b', admin)).project).toBe('team-b');
    await expect(service.get(URL_SHARED, 'team-z', admin)).rejects.toBeInstanceOf(NotFoundError);
    const solo = 'https://git.example.com/solo.git';
    await service.create(input('team-a', 'solo-pw', solo), admin);
    expect((await service.get(solo, '', admin)).project).toBe('team-a');
    await expect(service.get(solo, 'team-b', admin)).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.delete(URL_SHARED, '', admin)).rejects.toThrow(/name the project/);
    await service.delete(URL_SHARED, 'team-b', admin);
    await expect(service.get(URL_SHARED, 'team-b', admin)).rejects.toBeInstanceOf(NotFoundError);
    expect((await service.get(URL_SHARED, 'team-a', admin)).project).toBe('team-a');
  });

  it('updates strictly within the named scope', async () => {
    await expect(service.update(input('team-b', 'new'), admin)).rejects.toBeInstanceOf(NotFoundError);
    const updated = await service.update({ ...input('team-a', `${CANARY}-2`), username: 'bot-a-2' }, admin);
    expect(updated.username).toBe('bot-a-2');
    const global = await lookup({ url: URL_SHARED, project: 'team-c', application: null }, { actor: 'repo' });
    expect(global.credential?.auth.password).toBe('pw-global');
  });

  it('applies Argo CD declarative secrets, keeping their names', async () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'team-d-repo',
        namespace: 'argocd',
        labels: { 'argocd.argoproj.io/secret-type': 'repository' },
      },
      stringData: {
        url: 'https://git.example.com/d.git',
        project: 'team-d',
        username: 'd',
        password: 'pw-d',
      },
    };
    const created = await service.applySecret(secret, admin);
    expect(created.outcome).toBe('created');
    expect(created.credential).toMatchObject({
      name: 'team-d-repo',
      origin: 'declarative',
      project: 'team-d',
    });
    const again = await service.applySecret(
      { ...secret, stringData: { ...secret.stringData, username: 'd2' } },
      admin,
    );
    expect(again.outcome).toBe('configured');
    expect(again.credential).toMatchObject({ id: created.credential?.id, username: 'd2' });
    await expect(
      service.applySecret({ ...secret, stringData: { url: 'https://u:leak@h/x.git' } }, admin),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it('never moves a credential to another scope by its name (take-over is a conflict naming neither side)', async () => {
    const victim = await service.create(
      input('team-x', CANARY, 'https://git.example.com/x/private.git'),
      admin,
    );
    const takeOver = (project: string, stringData: Record<string, string> = {}) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: victim.name, labels: { 'argocd.argoproj.io/secret-type': 'repository' } },
      stringData: {
        url: 'https://git.example.com/x/private.git',
        ...(project ? { project } : {}),
        username: 'mallory',
        password: 'mallory-pw',
        ...stringData,
      },
    });
    for (const [project, extra] of [
      ['team-y', {}],
      ['', {}],
      ['team-y', { url: 'https://git.example.com/y/other.git' }],
    ] as const) {
      for (const dryRun of [true, false]) {
        const err = await service
          .applySecret(takeOver(project, extra), { actor: 'user:mallory' }, { dryRun })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(AlreadyExistsError);
        expect((err as Error).message).toContain('already exists in another scope');
        expect((err as Error).message).not.toContain('team-x');
        expect((err as Error).message).not.toContain(CANARY);
      }
    }
    // The victim's credential is untouched: its scope, username and secret.
    const lookupX = await lookup(
      { url: 'https://git.example.com/x/private.git', project: 'team-x', application: null },
      admin,
    );
    expect(lookupX.credentialId).toBe(victim.id);
    expect(lookupX.credential?.auth).toMatchObject({ username: 'bot-team-x', password: CANARY });
    const lookupY = await lookup(
      { url: 'https://git.example.com/x/private.git', project: 'team-y', application: null },
      admin,
    );
    expect(lookupY.credentialId).toBeNull();
    const refusals = (await decisions()).filter(
      (r) => r.outcome === 'deny' && r.message?.includes('another scope'),
    );
    expect(refusals).toHaveLength(6);
  });

  it('plans a declarative apply without writing, and refuses when the name changed hands since', async () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'team-e-repo', labels: { 'argocd.argoproj.io/secret-type': 'repository' } },
      stringData: { url: 'https://git.example.com/e.git', project: 'team-e', username: 'e', password: 'pw' },
    };
    const plan = await service.applySecret(secret, admin, { dryRun: true });
    expect(plan).toEqual({ credential: null, outcome: 'created' });
    expect((await service.list('team-e', admin)).length).toBe(0);
    const created = await service.applySecret(secret, admin, { expectedId: '' });
    await expect(service.applySecret(secret, admin, { expectedId: '' })).rejects.toBeInstanceOf(
      ConcurrencyError,
    );
    const replan = await service.applySecret(secret, admin, { dryRun: true });
    expect(replan.outcome).toBe('configured');
    expect(replan.credential?.id).toBe(created.credential?.id);
    const updated = await service.applySecret(secret, admin, { expectedId: created.credential!.id });
    expect(updated.outcome).toBe('configured');
  });

  it('audits every lookup, mutation and refusal with candidates and reasons, never a secret', async () => {
    const rows = await decisions();
    const ops = rows.map((r) => `${r.operation}:${r.reason}:${r.outcome}`);
    expect(ops).toEqual(
      expect.arrayContaining([
        'create:exact:allow',
        'create:refused:deny',
        'lookup:project-match:allow',
        'lookup:none:allow',
        'lookup:unscoped-fallback:allow',
        'get:ambiguous:deny',
        'get:not-found:deny',
        'delete:exact:allow',
        'update:not-found:deny',
        'update:exact:allow',
      ]),
    );
    const lookup = rows.find((r) => r.operation === 'lookup' && r.reason === 'project-match');
    expect(lookup?.candidates).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ project: 'team-a' }),
        expect.objectContaining({ project: 'team-b' }),
      ]),
    );
    const text = JSON.stringify(rows);
    for (const secret of [CANARY, 'pw-b', 'pw-global', 'pw-d', 'leak']) expect(text).not.toContain(secret);
    expect((await verifyAuditChain(db as unknown as Kysely<unknown>, 'credential_decisions')).ok).toBe(true);
  });

  it('lists without secrets', async () => {
    const all = await service.list(undefined, admin);
    expect(all.map((c) => c.project)).toEqual(expect.arrayContaining(['team-a', '', 'team-d']));
    expect(JSON.stringify(all)).not.toContain(CANARY);
    expect((await service.list('team-d', admin)).map((c) => c.name)).toEqual(['team-d-repo']);
  });

  it('re-seals every credential with the active key after a rotation, keeping secrets readable', async () => {
    const rotated = parseKeyring(JSON.stringify({ active: 'k2', keys: { k1: K1, k2: K2 } }));
    const before = await sql<{
      n: number;
    }>`select count(*)::int as n from repo.credentials where key_id = 'k1'`.execute(db);
    expect(before.rows[0]?.n).toBeGreaterThan(0);
    expect(await resealRows(db, rotated, sealedCredentials)).toBe(before.rows[0]?.n);
    expect(await resealRows(db, rotated, sealedCredentials)).toBe(0);
    const keys = await sql<{ key_id: string }>`select distinct key_id from repo.credentials`.execute(db);
    expect(keys.rows).toEqual([{ key_id: 'k2' }]);
    const onlyK2 = new CredentialService(
      db,
      parseKeyring(JSON.stringify({ active: 'k2', keys: { k2: K2 } })),
    );
    const found = await onlyK2.lookupForApplication(
      { url: URL_SHARED, project: 'team-a', application: null },
      { actor: 'repo' },
    );
    await found.recorded;
    expect(found.credential?.auth.password).toBe(`${CANARY}-2`);
  });
});
