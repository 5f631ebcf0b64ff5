// Story: tenants share one repository URL, each with its own credential. The real repo service
// (its own process, real PostgreSQL, NATS and git server) checks out with the right credential per
// project, falls back to the unscoped one, applies the API's get/delete rules, reacts to push
// events, and never lets a secret reach its logs, events, audit rows, errors or the process list.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { headers, type NatsConnection } from 'nats';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { bearer, unary, type repov1 } from '@capstan/proto';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import type { ApiProcess } from './api-harness.js';
import { startRepoAndApi } from './control-plane.js';
import { grpcError, startRepoProcess, type RepoProcess } from './repo-harness.js';

const execFileAsync = promisify(execFile);
const CANARY_A = `canary-a-${randomBytes(8).toString('hex')}`;
const CANARY_B = `canary-b-${randomBytes(8).toString('hex')}`;
const CANARY_G = `canary-g-${randomBytes(8).toString('hex')}`;
const CANARIES = [CANARY_A, CANARY_B, CANARY_G];

// Argo CD's RepoURLToSecretName, written out independently of the service's implementation.
function argoSecretName(url: string, project: string): string {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(url + project, 'utf8')) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return `repo-${h}`;
}

const deployment = (name: string, image: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: ${image}\n`;

describe('repo service: project-scoped repository credentials', () => {
  let git: GitServer;
  let shared: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let cacheDir: string;
  let repo: RepoProcess;
  let nc: NatsConnection;
  const busMessages: string[] = [];
  const errors: string[] = [];
  const processList = new Set<string>();
  let polling = true;
  let poller: Promise<void>;

  const input = (
    url: string,
    project: string,
    username: string,
    password: string,
  ): repov1.CredentialInput => ({
    repo: url,
    project,
    type: 'git',
    displayName: '',
    username,
    password,
    sshPrivateKey: '',
    insecure: false,
    enableOci: false,
    insecureOciForceHttp: false,
  });
  const generate = (project: string, app = 'guestbook', url = shared.url) =>
    repo.call(
      repo.client.generateManifests,
      {
        source: { repoUrl: url, targetRevision: 'main', path: 'guestbook', chart: '' },
        application: { name: app, namespace: 'argocd', project },
        refSources: [],
      },
      { service: 'sync' },
    );
  const failure = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err, 'the call should have failed').not.toBeNull();
    const e = grpcError(err);
    errors.push(e.details);
    return e;
  };
  const usersSince = (mark: number, name = 'shared/apps.git') =>
    new Set(
      git.requests
        .slice(mark)
        .filter((r) => r.repository === name && r.status === 200)
        .map((r) => r.username),
    );

  beforeAll(async () => {
    poller = (async () => {
      while (polling) {
        const { stdout } = await execFileAsync('ps', ['-eo', 'args'], { maxBuffer: 16 * 1024 * 1024 });
        for (const line of stdout.split('\n')) processList.add(line);
      }
    })();
    git = await startGitServer();
    shared = await git.createRepository('shared/apps.git', {
      credentials: [
        { username: 'alice-a', password: CANARY_A },
        { username: 'bob-b', password: CANARY_B },
        { username: 'ci-global', password: CANARY_G },
      ],
    });
    await shared.commit({ 'guestbook/deploy.yaml': deployment('guestbook', 'guestbook:v1') });
    db = await createTestDatabase('capstan_repo_e2e');
    bus = await createTestBus('repoe2e');
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'capstan-repo-e2e-'));
    // Watches everything on the namespace (secrets never travel on the bus): an operator's view.
    nc = await bus.connect('admin');
    const sub = nc.subscribe(`${bus.namespace}.>`);
    void (async () => {
      for await (const m of sub) busMessages.push(`${m.subject} ${m.string()}`);
    })();
    repo = await startRepoProcess({
      databaseUrl: db.url,
      bus,
      cacheDir,
      env: { CAPSTAN_REVISION_CACHE_TTL_MS: '0', CAPSTAN_POLL_INTERVAL_MS: '0' },
    });
    await repo.call(
      repo.client.createCredential,
      { credential: input(shared.url, 'team-a', 'alice-a', CANARY_A), upsert: false },
      { actor: 'user:admin' },
    );
    await repo.call(
      repo.client.createCredential,
      { credential: input(shared.url, 'team-b', 'bob-b', CANARY_B), upsert: false },
      { actor: 'user:admin' },
    );
  });

  afterAll(async () => {
    polling = false;
    await poller;
    await repo?.stop();
    await nc?.close();
    await git?.close();
    await bus?.cleanup();
    await db?.drop();
    await rm(cacheDir, { recursive: true, force: true });
  });

  it('gives two projects with different credentials for one URL their own checkout and the right content', async () => {
    let mark = git.requests.length;
    const a = await generate('team-a');
    expect(usersSince(mark)).toEqual(new Set(['alice-a']));
    mark = git.requests.length;
    const b = await generate('team-b');
    expect(usersSince(mark)).toEqual(new Set(['bob-b']));
    for (const out of [a, b]) {
      expect(out.revision).toBe(await shared.sha('main'));
      expect(out.sourceType).toBe('directory');
      expect(JSON.parse(out.manifests[0] ?? '{}')).toMatchObject({
        kind: 'Deployment',
        metadata: { name: 'guestbook' },
      });
    }
    // One exported tree per credential: the two projects never share a checkout.
    expect((await readdir(path.join(cacheDir, 'trees'))).length).toBe(2);
    expect((await readdir(path.join(cacheDir, 'mirrors'))).filter((d) => !d.includes('.tmp')).length).toBe(2);

    // team-b's credential stops working upstream: team-b fails with a clear error, team-a is unaffected.
    git.setCredentials('shared/apps.git', [
      { username: 'alice-a', password: CANARY_A },
      { username: 'ci-global', password: CANARY_G },
    ]);
    const v2 = await shared.commit({ 'guestbook/deploy.yaml': deployment('guestbook', 'guestbook:v2') });
    const refused = await failure(generate('team-b'));
    expect(refused.code).toBe(status.PERMISSION_DENIED);
    expect(refused.details).toBe(`authentication to repository ${shared.url} (revision main) failed`);
    const a2 = await generate('team-a');
    expect(a2.revision).toBe(v2);
    expect(a2.manifests[0]).toContain('guestbook:v2');
  });

  it('falls back to the unscoped credential for a project without its own', async () => {
    await repo.call(
      repo.client.createCredential,
      { credential: input(shared.url, '', 'ci-global', CANARY_G), upsert: false },
      { actor: 'user:admin' },
    );
    const mark = git.requests.length;
    const c = await generate('team-c');
    expect(c.manifests[0]).toContain('guestbook:v2');
    expect(usersSince(mark)).toEqual(new Set(['ci-global']));
    const lookup = await repo.call(
      repo.client.lookupCredential,
      { repoUrl: shared.url, application: { name: 'x', namespace: 'argocd', project: 'team-c' } },
      { service: 'sync' },
    );
    expect(lookup).toMatchObject({
      reason: 'unscoped-fallback',
      credentialName: argoSecretName(shared.url, ''),
    });
    const own = await repo.call(
      repo.client.lookupCredential,
      { repoUrl: shared.url, application: { name: 'x', namespace: 'argocd', project: 'team-a' } },
      { service: 'sync' },
    );
    expect(own.reason).toBe('project-match');
  });

  it('checks out anonymously when no credential applies, and says which repository and revision failed', async () => {
    const locked = await git.createRepository('locked.git', {
      credentials: [{ username: 'x', password: 'y' }],
    });
    await locked.commit({ 'guestbook/a.yaml': deployment('a', 'a:1') });
    const e = await failure(generate('team-a', 'guestbook', locked.url));
    expect(e.code).toBe(status.PERMISSION_DENIED);
    expect(e.details).toBe(`authentication to repository ${locked.url} (revision main) failed`);
    const missing = await failure(
      repo.call(
        repo.client.generateManifests,
        {
          source: { repoUrl: shared.url, targetRevision: 'no-such-branch', path: 'guestbook', chart: '' },
          application: { name: 'g', namespace: 'argocd', project: 'team-a' },
          refSources: [],
        },
        { service: 'sync' },
      ),
    );
    expect(missing).toEqual({
      code: status.NOT_FOUND,
      details: `revision no-such-branch not found in repository ${shared.url}`,
    });
  });

  it('applies the API rules for get and delete', async () => {
    const get = (url: string, project: string) =>
      repo.call(repo.client.getCredential, { repo: url, project }, { actor: 'user:admin' });
    const del = (url: string, project: string) =>
      repo.call(repo.client.deleteCredential, { repo: url, project }, { actor: 'user:admin' });
    // Several credentials and no project: the caller must name the project.
    const ambiguous = await failure(get(shared.url, ''));
    expect(ambiguous.code).toBe(status.FAILED_PRECONDITION);
    expect(ambiguous.details).toMatch(/several credentials exist for \S+; name the project$/);
    const a = await get(shared.url, 'team-a');
    expect(a.credential).toMatchObject({ project: 'team-a', username: 'alice-a', hasPassword: true });
    expect((await failure(get(shared.url, 'team-x'))).code).toBe(status.NOT_FOUND);
    // One credential: no project returns it; a project must match.
    const solo = 'https://git.example.com/solo.git';
    await repo.call(
      repo.client.createCredential,
      { credential: input(solo, 'team-a', 'solo', 'solo-pw'), upsert: false },
      { actor: 'user:admin' },
    );
    expect((await get(solo, '')).credential?.project).toBe('team-a');
    expect((await failure(get(solo, 'team-b'))).code).toBe(status.NOT_FOUND);
    expect((await failure(del(solo, 'team-b'))).code).toBe(status.NOT_FOUND);
    await del(solo, '');
    expect((await failure(get(solo, ''))).code).toBe(status.NOT_FOUND);
    // Delete on a shared URL needs the project, and removes only that project's credential.
    expect((await failure(del(shared.url, ''))).code).toBe(status.FAILED_PRECONDITION);
    await del(shared.url, 'team-b');
    expect((await failure(get(shared.url, 'team-b'))).code).toBe(status.NOT_FOUND);
    expect((await get(shared.url, 'team-a')).credential?.username).toBe('alice-a');
    // Mutations match the project strictly; a duplicate in one project is refused.
    expect(
      (
        await failure(
          repo.call(
            repo.client.updateCredential,
            { credential: input(shared.url, 'team-x', 'u', 'p') },
            { actor: 'user:admin' },
          ),
        )
      ).code,
    ).toBe(status.NOT_FOUND);
    expect(
      (
        await failure(
          repo.call(
            repo.client.createCredential,
            { credential: input(shared.url, 'team-a', 'u', 'p'), upsert: false },
            { actor: 'user:admin' },
          ),
        )
      ).code,
    ).toBe(status.ALREADY_EXISTS);
    const listed = await repo.call(repo.client.listCredentials, {}, { actor: 'user:admin' });
    expect(listed.credentials.map((c) => c.project).sort()).toEqual(['', 'team-a']);
  });

  it('authenticates every call and allows each service only its methods', async () => {
    const none = await failure(repo.call(repo.client.listCredentials, {}, { token: 'not-a-token' }));
    expect(none.code).toBe(status.UNAUTHENTICATED);
    const sync = await failure(
      repo.call(repo.client.getCredential, { repo: shared.url, project: 'team-a' }, { service: 'sync' }),
    );
    expect(sync).toEqual({
      code: status.PERMISSION_DENIED,
      details: 'service sync may not call getCredential',
    });
    const bad = await failure(
      repo.call(
        repo.client.createCredential,
        {
          credential: input('https://u:leak@h.example/x.git', 'Bad Project', 'u\nx', CANARY_A),
          upsert: false,
        },
        { actor: 'user:admin' },
      ),
    );
    expect(bad.code).toBe(status.INVALID_ARGUMENT);
    expect(bad.details).toMatch(
      /url: must not carry a password.*project: must be empty \(unscoped\) or a project name.*username: must not contain line breaks/,
    );
  });

  it('refuses a forwarded actor without a delegation, and connections without a client certificate', async () => {
    // Issue 10 §4: the api (or anyone with its token) once named any user in x-capstan-actor.
    const forwarded = await failure(repo.call(repo.client.listCredentials, {}, { rawActor: 'user:admin' }));
    expect(forwarded.code).toBe(status.PERMISSION_DENIED);
    const noDelegation = await failure(repo.call(repo.client.listCredentials, {}));
    expect(noDelegation).toEqual({
      code: status.PERMISSION_DENIED,
      details: "listCredentials acts for a user: present the api's delegation",
    });
    // The api's token on the appset's connection: the token is bound to the api's certificate.
    const wrongCert = await failure(
      unary(
        repo.clientAs('appset').listCredentials.bind(repo.clientAs('appset')),
        {},
        {
          metadata: bearer(repo.serviceToken('api')),
        },
      ),
    );
    expect(wrongCert.code).toBe(status.UNAUTHENTICATED);
    // No client certificate: refused during the TLS handshake, before any token is read.
    const noCert = await failure(
      unary(repo.clientAs('none').listCredentials.bind(repo.clientAs('none')), {}, { timeoutMs: 5000 }),
    );
    expect(noCert.code).toBe(status.UNAVAILABLE);
  });

  it('lists directories and files for ApplicationSet generators with the project credential', async () => {
    await shared.commit({
      'clusters/east/config.json': '{"name":"east"}',
      'clusters/west/config.json': '{"name":"west"}',
    });
    const app = { name: 'set', namespace: 'argocd', project: 'team-a' };
    const dirs = await repo.call(
      repo.client.listDirectories,
      {
        repoUrl: shared.url,
        revision: 'main',
        application: app,
        patterns: [
          { pattern: 'clusters/*', exclude: false },
          { pattern: 'clusters/west', exclude: true },
        ],
      },
      { service: 'appset', actor: 'user:alice' },
    );
    expect(dirs.paths).toEqual(['clusters/east']);
    const files = await repo.call(
      repo.client.listFiles,
      {
        repoUrl: shared.url,
        revision: 'main',
        application: app,
        patterns: [{ pattern: 'clusters/**/config.json', exclude: false }],
        withContent: true,
      },
      { service: 'appset', actor: 'user:alice' },
    );
    expect(files.files).toEqual([
      { path: 'clusters/east/config.json', content: '{"name":"east"}' },
      { path: 'clusters/west/config.json', content: '{"name":"west"}' },
    ]);
    // The sync service renders but does not list.
    expect(
      (
        await failure(
          repo.call(
            repo.client.listFiles,
            { repoUrl: shared.url, revision: 'main', application: app, patterns: [], withContent: false },
            { service: 'sync' },
          ),
        )
      ).code,
    ).toBe(status.PERMISSION_DENIED);
  });

  it('accepts Argo CD declarative repository secrets', async () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'team-d-apps',
        namespace: 'argocd',
        labels: { 'argocd.argoproj.io/secret-type': 'repository' },
      },
      stringData: { url: shared.url, project: 'team-d', username: 'alice-a', password: CANARY_A },
    };
    const applied = await repo.call(
      repo.client.applyCredentialSecret,
      { manifestJson: JSON.stringify(secret), dryRun: false },
      { actor: 'user:admin' },
    );
    expect(applied.outcome).toBe('created');
    expect(applied.credential).toMatchObject({
      name: 'team-d-apps',
      project: 'team-d',
      origin: 'declarative',
      hasPassword: true,
    });
    const mark = git.requests.length;
    await generate('team-d');
    expect(usersSince(mark)).toEqual(new Set(['alice-a']));
    const bad = await failure(
      repo.call(
        repo.client.applyCredentialSecret,
        {
          manifestJson: JSON.stringify({ ...secret, stringData: { project: 'team-d', password: CANARY_A } }),
          dryRun: false,
        },
        { actor: 'user:admin' },
      ),
    );
    expect(bad).toEqual({
      code: status.INVALID_ARGUMENT,
      details: 'stringData.url: is required (in data or stringData)',
    });
  });

  it('announces a new revision when another system reports a push', async () => {
    const v3 = await shared.commit({ 'guestbook/deploy.yaml': deployment('guestbook', 'guestbook:v3') });
    const changed = nc.subscribe(`${bus.namespace}.evt.repository.revision-changed`);
    const id = randomUUID();
    const push = {
      specversion: '1.0',
      id,
      correlationid: id,
      source: 'ci/webhook-bridge',
      type: 'io.capstan.ext.git.push.v1',
      subject: shared.url,
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      actor: 'system:ci',
      data: { repoURL: shared.url, ref: 'refs/heads/main', after: v3 },
    };
    const h = headers();
    h.set('Nats-Msg-Id', push.id);
    // Published as the git system's own bus user, which may publish only ext.git.*.
    const gitSystem = await bus.connect('ext-git');
    try {
      await gitSystem
        .jetstream()
        .publish(`${bus.namespace}.ext.git.push`, JSON.stringify(push), { headers: h });
    } finally {
      await gitSystem.close();
    }
    const seen: { project: string; sha: string; detectedBy: string; previousSha: string | null }[] = [];
    const giveUp = setTimeout(() => changed.unsubscribe(), 45_000);
    for await (const m of changed) {
      const event = JSON.parse(m.string()) as { data: (typeof seen)[number]; causationid?: string };
      if (event.data.sha !== v3) continue;
      expect(event.causationid).toBe(push.id);
      seen.push(event.data);
      // team-a and team-d (own credentials), team-b (its credential deleted: now the unscoped one)
      // and team-c (unscoped fallback) all watch main.
      if (new Set(seen.map((s) => s.project)).size >= 4) break;
    }
    clearTimeout(giveUp);
    changed.unsubscribe();
    expect(
      seen.map((s) => s.project).sort(),
      repo
        .output()
        .split('\n')
        .filter((l) => /push|dead|warn/i.test(l))
        .join('\n'),
    ).toEqual(['team-a', 'team-b', 'team-c', 'team-d']);
    expect(seen.every((s) => s.detectedBy === 'push')).toBe(true);
  });

  it('never lets a canary secret reach logs, events, audit rows, errors or the process list', async () => {
    polling = false;
    await poller;
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const audit = await client.query('select * from audit.credential_decisions order by id');
    await client.end();
    expect(audit.rows.length).toBeGreaterThan(10);
    expect(audit.rows.map((r: { operation: string }) => r.operation)).toEqual(
      expect.arrayContaining(['create', 'lookup', 'get', 'delete', 'list', 'update']),
    );
    const metrics = await repo.metrics();
    // Argo CD's repo-server metrics: the repository by its URL as Argo CD normalises it (never a
    // credential), the first clone and later fetches as request_type="fetch", the refused fetch a failure.
    const sharedRepo = shared.url.replace(/\.git$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(metrics).toMatch(
      new RegExp(
        `capstan_git_request_total\\{repo="${sharedRepo}",request_type="fetch"[^}]*\\} ([2-9]|\\d\\d)`,
      ),
    );
    expect(metrics).toMatch(
      new RegExp(`capstan_git_fetch_fail_total\\{repo="${sharedRepo}",revision="[^"]+"[^}]*\\} [1-9]`),
    );
    expect(metrics).toMatch(
      /capstan_git_request_duration_seconds_count\{[^}]*request_type="fetch"[^}]*\} [1-9]/,
    );
    expect(metrics).toMatch(/capstan_repo_credential_lookups_total\{reason="unscoped-fallback"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/capstan_repo_manifest_cache_total\{result="miss"[^}]*\} [1-9]/);
    // Metrics never name a project or user (the repository URL is Argo CD's label; no credential in it).
    expect(metrics).not.toMatch(/team-a|alice/);
    const sinks: Record<string, string> = {
      metrics,
      'process list': [...processList].join('\n'),
      'service output': repo.output(),
      'bus messages': busMessages.join('\n'),
      'audit rows': JSON.stringify(audit.rows),
      'error messages': errors.join('\n'),
    };
    expect(processList.size).toBeGreaterThan(1);
    expect(sinks['process list']).toMatch(/git/);
    expect(busMessages.length).toBeGreaterThan(0);
    for (const [sink, text] of Object.entries(sinks)) {
      for (const canary of CANARIES) expect(text.includes(canary), `${sink} contains a canary`).toBe(false);
    }
  });
});

// Story: two tenants on the real api and repo service. Credential names are predictable (Argo CD's
// repo-<fnv>), so team-y applies a declarative Secret named like team-x's credential: a conflict
// that names neither team-x nor anything of its secret, the same verdict in a dry run, and team-x's
// credential untouched. Project roles grant repositories inside their project, as Argo CD's do.
describe('api + repo service: a credential cannot be taken over by its name', () => {
  const CANARY_X = `canary-x-${randomBytes(8).toString('hex')}`;
  const URL_X = 'https://git.example.com/private/x.git';
  let db: TestDatabase;
  let bus: TestBus;
  let cacheDir: string;
  let repo: RepoProcess;
  let api: ApiProcess;
  let admin: string;

  const http = async (method: string, path: string, token?: string, body?: unknown) => {
    const res = await fetch(`${api.httpUrl}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, text: '' };
  };
  const login = async (username: string, password: string) =>
    String((await http('POST', '/api/v1/session', undefined, { username, password })).body.token);
  const secret = (name: string, project: string, username: string, password: string, url = URL_X) =>
    `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n  namespace: argocd\n  labels: { argocd.argoproj.io/secret-type: repository }\nstringData:\n  url: ${url}\n  project: ${project}\n  username: ${username}\n  password: ${password}\n`;
  const apply = (token: string, manifests: string, dryRun = false) =>
    http('POST', '/api/v1/apply', token, { manifests, dryRun, strict: false });

  beforeAll(async () => {
    db = await createTestDatabase('capstan_takeover_e2e');
    bus = await createTestBus('takeovere2e');
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'capstan-takeover-e2e-'));
    ({ repo, api } = await startRepoAndApi({ databaseUrl: db.url, bus, cacheDir }));
    admin = await login('admin', api.adminPassword);
    for (const team of ['team-x', 'team-y']) {
      const project = await http('POST', '/api/v1/projects', admin, {
        project: {
          metadata: { name: team },
          spec: {
            sourceRepos: ['*'],
            roles: [
              {
                name: 'admin',
                policies: ['create', 'update', 'get'].map(
                  (action) => `p, proj:${team}:admin, repositories, ${action}, ${team}/*, allow`,
                ),
                groups: [`tenant-${team}`],
              },
            ],
          },
        },
      });
      expect(project.status, JSON.stringify(project.body)).toBe(200);
      const account = await http('POST', '/api/v1/account', admin, {
        name: team.replace('team-', 'user-'),
        password: `${team}-password`,
        groups: [`tenant-${team}`],
        capabilities: ['login'],
      });
      expect(account.status, JSON.stringify(account.body)).toBe(200);
    }
  });

  afterAll(async () => {
    await api?.stop();
    await repo?.stop();
    await bus?.cleanup();
    await db?.drop();
    await rm(cacheDir, { recursive: true, force: true });
  });

  it("refuses team-y's Secret named like team-x's credential, in a dry run as in the apply", async () => {
    const x = await login('user-x', 'team-x-password');
    const y = await login('user-y', 'team-y-password');
    const created = await http('POST', '/api/v1/repositories', x, {
      repo: URL_X,
      project: 'team-x',
      username: 'xavier',
      password: CANARY_X,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const name = String(created.body.secretName);
    expect(name).toBe(argoSecretName(URL_X, 'team-x'));

    for (const dryRun of [true, false]) {
      const takeOver = await apply(y, secret(name, 'team-y', 'mallory', 'mallory-pw'), dryRun);
      expect(takeOver.status, JSON.stringify(takeOver.body)).toBe(409);
      expect(String(takeOver.body.message)).toContain('already exists in another scope');
      expect(JSON.stringify(takeOver.body)).not.toContain('team-x');
      expect(JSON.stringify(takeOver.body)).not.toContain(CANARY_X);
    }
    // Naming team-x's project instead is not hers to write.
    expect((await apply(y, secret(name, 'team-x', 'mallory', 'mallory-pw'))).status).toBe(403);

    const still = await http('GET', `/api/v1/repositories/${encodeURIComponent(URL_X)}?project=team-x`, x);
    expect(still.body).toMatchObject({ project: 'team-x', username: 'xavier', secretName: name });
    const ys = await http('GET', '/api/v1/repositories', y);
    expect(JSON.stringify(ys.body)).not.toContain('team-x');
  });

  it('reports what an apply of her own Secret really did', async () => {
    const y = await login('user-y', 'team-y-password');
    const own = secret('team-y-apps', 'team-y', 'yolanda', 'pw-y', 'https://git.example.com/team-y/apps.git');
    const action = async (dryRun: boolean) =>
      ((await apply(y, own, dryRun)).body.results as { action: string }[])[0]?.action;
    expect(await action(true)).toBe('would-create');
    expect(await action(false)).toBe('created');
    expect(await action(true)).toBe('would-configure');
    expect(await action(false)).toBe('configured');
  });
});
