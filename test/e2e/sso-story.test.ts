// Story (issue 16): a team moving from Argo CD signs in with its company's OpenID Connect provider
// and gives its CI a project token. A real Dex (test/scripts/obtain-dex.sh) with password users in
// groups; the api as its own process with the client secret in its environment; argocd-cm's
// oidc.config (`clientSecret: $oidc.clientSecret`) and url and argocd-rbac-cm's `g, <group>, role`
// applied with `capstan apply -f`. `capstan login --sso` prints the URL, the "browser" (HTTP, Dex's
// own login form) signs in and lands on the CLI's loopback listener; the session has the group's
// rights. `capstan proj role create-token` gives CI a token with exactly its role's rights, used
// through CAPSTAN_AUTH_TOKEN, and `delete-token` ends it. The appset service runs too: the single
// sign-on user creates an ApplicationSet and owns it; once she logs out of every session its
// background reconciles stop (the set's status and the audit say why) until she logs in again.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserLogin,
  createTestBus,
  createTestDatabase,
  DEX_CLIENT_SECRET,
  DEX_PASSWORD,
  freePort,
  startDex,
  type Dex,
  type TestBus,
  type TestDatabase,
} from '@capstan/test/infra';
// The same module instance as api-harness.ts: one PKI (the CA the api's certificate is signed by).
import { testPki } from '../src/infra/index.js';
import { capstan, startApiProcess, type ApiProcess } from './api-harness.js';
import {
  appsetTokens,
  reserveAppsetAddress,
  startAppsetProcess,
  type AppsetProcess,
} from './appset-harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const capstanBin = path.resolve(here, '../../cli/bin/capstan.js');
const carol = { email: 'carol@example.com', username: 'carol', userID: 'carol-id', groups: ['platform'] };

const configMap = (name: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: ${name}, namespace: argocd }\ndata:\n${Object.entries(
    data,
  )
    .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
    .join('\n')}\n`;

describe('sso story: capstan login --sso through Dex, and a project token for CI', () => {
  let db: TestDatabase;
  let bus: TestBus;
  let api: ApiProcess;
  let appset: AppsetProcess;
  let dex: Dex;
  let dir: string;
  let config: string;
  let ssoPort: number;
  const as = (ctx: string, args: string[], input?: string) =>
    capstan(config, ['--context', ctx, ...args], input);

  /** `capstan login --sso`: resolves with the URL it prints, then with its result. */
  async function ssoLogin(name: string) {
    const { caFile } = await testPki();
    const child = spawn(
      process.execPath,
      [capstanBin, 'login', api.grpcAddress, '--sso', '--sso-port', String(ssoPort), '--name', name],
      {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/root',
          CAPSTAN_CONFIG: config,
          CAPSTAN_SERVER_CRT: caFile,
        },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const url = new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        const m = /^(http\S+)$/m.exec(stderr);
        if (m) resolve(m[1]!);
      });
      child.once('exit', () => reject(new Error(`capstan login --sso ended: ${stderr}`)));
    });
    const result = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.once('exit', (code) => resolve({ code, stdout, stderr })),
    );
    return { url, result };
  }

  /** `capstan login --sso` with carol through Dex's form, to its end. */
  async function ssoSignIn(name: string) {
    const { url, result } = await ssoLogin(name);
    const callback = await browserLogin(
      await url,
      `http://127.0.0.1:${ssoPort}/auth/callback`,
      carol.email,
      DEX_PASSWORD,
    );
    // the browser lands on the CLI's listener
    expect((await fetch(callback)).status).toBe(200);
    return result;
  }

  /** Polls `probe` until it returns a value (30 s). */
  async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
    for (let i = 0; i < 120; i++) {
      const v = await probe();
      if (v !== undefined) return v;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  beforeAll(async () => {
    db = await createTestDatabase('capstan_sso_story');
    bus = await createTestBus('sso');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-sso-story-'));
    config = path.join(dir, 'config');
    ssoPort = await freePort();
    // The appset service too, reconciling often: a set owned by a single sign-on user.
    const appsetAddress = await reserveAppsetAddress();
    const tokens = appsetTokens();
    api = await startApiProcess({
      databaseUrl: db.url,
      bus,
      appset: { address: appsetAddress, tokens },
      env: { CAPSTAN_AUTH_OIDC_CLIENT_SECRET: DEX_CLIENT_SECRET },
    });
    appset = await startAppsetProcess({
      databaseUrl: db.url,
      bus,
      address: appsetAddress,
      tokens,
      apiAddress: api.grpcAddress,
      repoAddress: appsetAddress, // the list generator reads no repository
      repoToken: 'r'.repeat(40),
      env: { CAPSTAN_RECONCILE_TICK_MS: '500', CAPSTAN_RECONCILE_REQUEUE_SECONDS: '1' },
    });
    dex = await startDex({
      redirectURIs: [`${api.httpUrl}/auth/callback`, `http://127.0.0.1:${ssoPort}/auth/callback`],
      users: [carol],
    });
    const login = await capstan(
      config,
      ['login', api.grpcAddress, '--username', 'admin', '--password-stdin', '--name', 'admin'],
      `${api.adminPassword}\n`,
    );
    expect(login.code).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await dex?.stop();
    await appset?.stop();
    await api?.stop();
    await bus?.cleanup();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('signs in with --sso; the provider group is the RBAC subject; logout ends the session', async () => {
    const settings = path.join(dir, 'sso.yaml');
    await writeFile(
      settings,
      configMap('argocd-cm', {
        url: api.httpUrl,
        'oidc.config': `name: Dex\nissuer: ${dex.issuer}\nclientID: capstan\nclientSecret: $oidc.clientSecret\nrequestedScopes: [openid, email, groups, offline_access]\n`,
      }) +
        '---\n' +
        configMap('argocd-rbac-cm', { 'policy.csv': 'g, platform, role:admin\n' }),
    );
    const applied = await as('admin', ['apply', '-f', settings]);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    await new Promise((r) => setTimeout(r, 2100));

    const done = await ssoSignIn('carol');
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/^'.+' logged in successfully\nContext 'carol' updated\n$/);

    const who = await as('carol', ['account', 'get-user-info', '-o', 'json']);
    expect(JSON.parse(who.stdout)).toMatchObject({ loggedIn: true, groups: ['platform'] });
    const created = await as('carol', [
      'proj',
      'create',
      'team-a',
      '--src',
      '*',
      '--dest',
      'https://kubernetes.default.svc,team-a',
    ]);
    expect(created).toMatchObject({ code: 0 });

    expect((await as('carol', ['logout', 'carol'])).code).toBe(0);
    expect((await as('carol', ['proj', 'list'])).code).not.toBe(0);
  }, 60_000);

  it('gives CI a project token with exactly its role, usable through CAPSTAN_AUTH_TOKEN, until deleted', async () => {
    expect((await as('admin', ['proj', 'role', 'create', 'team-a', 'ci'])).code).toBe(0);
    expect((await as('admin', ['proj', 'role', 'add-policy', 'team-a', 'ci', '-a', 'get'])).code).toBe(0);
    const token = await as('admin', [
      'proj',
      'role',
      'create-token',
      'team-a',
      'ci',
      '--id',
      'github',
      '-e',
      '1h',
      '-t',
    ]);
    expect(token.code).toBe(0);
    const ci = (args: string[]) =>
      capstan(path.join(dir, 'none'), args, undefined, {
        CAPSTAN_SERVER: api.grpcAddress,
        CAPSTAN_AUTH_TOKEN: token.stdout.trim(),
      });
    expect(await ci(['account', 'can-i', 'get', 'applications', 'team-a/web'])).toMatchObject({
      stdout: 'yes\n',
    });
    expect(await ci(['account', 'can-i', 'sync', 'applications', 'team-a/web'])).toMatchObject({
      stdout: 'no\n',
    });
    const listed = await as('admin', ['proj', 'role', 'list-tokens', 'team-a', 'ci']);
    expect(listed.stdout).toContain('github');
    expect((await as('admin', ['proj', 'role', 'delete-token', 'team-a', 'ci', 'github'])).code).toBe(0);
    const after = await ci(['account', 'can-i', 'get', 'applications', 'team-a/web']);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toContain('UNAUTHENTICATED');
  }, 60_000);

  it('lets a single sign-on user own an ApplicationSet: reconciled with the groups the provider verified, paused once the user logged out everywhere, resumed at the next login', async () => {
    expect((await ssoSignIn('carol')).code).toBe(0);
    const set = path.join(dir, 'web-set.yaml');
    await writeFile(
      set,
      [
        'apiVersion: argoproj.io/v1alpha1',
        'kind: ApplicationSet',
        'metadata: { name: web, namespace: argocd }',
        'spec:',
        '  generators: [{ list: { elements: [{ env: dev }] } }]',
        '  template:',
        "    metadata: { name: '{{env}}-web' }",
        '    spec:',
        '      project: team-a',
        '      source: { repoURL: https://git.example.com/team-a/web.git, path: web, targetRevision: HEAD }',
        '      destination: { server: https://kubernetes.default.svc, namespace: team-a }',
        '',
      ].join('\n'),
    );
    const created = await as('carol', ['appset', 'create', set]);
    expect(created.stderr).toBe("ApplicationSet 'web' created\n");
    expect(created.code).toBe(0);
    expect((await as('admin', ['app', 'get', 'dev-web', '-o', 'json'])).code).toBe(0);
    const conditions = async () => {
      const r = await as('admin', ['appset', 'get', 'web', '-o', 'json']);
      expect(r.code).toBe(0);
      const status = (
        JSON.parse(r.stdout) as {
          status?: { conditions?: { type: string; status: string; message: string }[] };
        }
      ).status;
      return status?.conditions ?? [];
    };

    // carol logs out of her only session: the set's background reconciles stop, and say why.
    expect((await as('carol', ['logout', 'carol'])).code).toBe(0);
    const paused = await eventually('the set paused', async () =>
      (await conditions()).find(
        (c) =>
          c.type === 'ErrorOccurred' &&
          c.status === 'True' &&
          c.message.includes('logged out of every session'),
      ),
    );
    expect(paused.message).toMatch(
      /acting as the set's owner: .*the owner of applicationsets\/argocd\/web cannot act: single sign-on user .+: logged out of every session .*log in again to resume/,
    );
    expect((await as('admin', ['app', 'get', 'dev-web', '-o', 'json'])).code).toBe(0); // left as it was
    const audit = new pg.Client({ connectionString: db.url });
    await audit.connect();
    const denied = await audit.query(
      `select reason from audit.access_decisions
        where action = 'issue-owner' and object = 'applicationsets/argocd/web' and decision = 'deny' limit 1`,
    );
    await audit.end();
    expect(denied.rows[0]?.reason).toContain('logged out of every session');

    // She logs in again: the next reconcile acts as her once more.
    expect((await ssoSignIn('carol')).code).toBe(0);
    await eventually('the set resumed', async () => {
      const c = await conditions();
      return c.some((x) => x.type === 'ErrorOccurred' && x.status === 'True') ? undefined : c;
    });
  }, 120_000);
});
