// Story (issue 16): a team moving from Argo CD signs in with its company's OpenID Connect provider
// and gives its CI a project token. A real Dex (test/scripts/obtain-dex.sh) with password users in
// groups; the api as its own process with the client secret in its environment; argocd-cm's
// oidc.config (`clientSecret: $oidc.clientSecret`) and url and argocd-rbac-cm's `g, <group>, role`
// applied with `capstan apply -f`. `capstan login --sso` prints the URL, the "browser" (HTTP, Dex's
// own login form) signs in and lands on the CLI's loopback listener; the session has the group's
// rights. `capstan proj role create-token` gives CI a token with exactly its role's rights, used
// through CAPSTAN_AUTH_TOKEN, and `delete-token` ends it.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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

  beforeAll(async () => {
    db = await createTestDatabase('capstan_sso_story');
    bus = await createTestBus('sso');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-sso-story-'));
    config = path.join(dir, 'config');
    ssoPort = await freePort();
    api = await startApiProcess({
      databaseUrl: db.url,
      bus,
      env: { CAPSTAN_AUTH_OIDC_CLIENT_SECRET: DEX_CLIENT_SECRET },
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

    const { url, result } = await ssoLogin('carol');
    const callback = await browserLogin(
      await url,
      `http://127.0.0.1:${ssoPort}/auth/callback`,
      carol.email,
      DEX_PASSWORD,
    );
    // the browser lands on the CLI's listener
    expect((await fetch(callback)).status).toBe(200);
    const done = await result;
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
});
