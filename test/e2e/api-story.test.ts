// Story: an admin bootstraps Capstan, creates a project with destinationServiceAccounts and a tenant
// role, registers a cluster and a project-scoped repository credential; a tenant creates and syncs
// an Application in that project and is refused one in another project; the audit queries show each
// decision. Everything runs for real: the api and repo services as their own processes on real
// PostgreSQL and NATS, driven through the `capstan` CLI (gRPC) and over HTTP.
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy } from 'nats';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import type { RepoProcess } from './repo-harness.js';
import { capstan, type ApiProcess } from './api-harness.js';
import { startRepoAndApi } from './control-plane.js';

const CLUSTER_TOKEN = `cluster-canary-${randomBytes(8).toString('hex')}`;
const REPO_PASSWORD = `repo-canary-${randomBytes(8).toString('hex')}`;

describe('api story through the CLI', () => {
  let db: TestDatabase;
  let bus: TestBus;
  let repo: RepoProcess;
  let api: ApiProcess;
  let dir: string;
  let config: string;
  const cli = (args: string[], input?: string) => capstan(config, args, input);
  const as = (ctx: string, args: string[], input?: string) =>
    capstan(config, ['--context', ctx, ...args], input);

  beforeAll(async () => {
    db = await createTestDatabase('capstan_story');
    bus = await createTestBus('story');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-story-'));
    config = path.join(dir, 'config');
    ({ repo, api } = await startRepoAndApi({ databaseUrl: db.url, bus, cacheDir: path.join(dir, 'cache') }));
  });

  afterAll(async () => {
    await api?.stop();
    await repo?.stop();
    await bus?.cleanup();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('bootstraps an admin whose password is only in a mode-600 file, never on stdout or stderr', async () => {
    expect(api.adminPassword).toMatch(/^\S{16,}$/);
    expect(statSync(api.adminPasswordFile).mode & 0o777).toBe(0o600);
    expect(api.output()).not.toContain(api.adminPassword);
    expect(api.output()).toContain(api.adminPasswordFile);
    const login = await cli(
      ['login', api.grpcAddress, '--username', 'admin', '--password-stdin', '--name', 'admin'],
      `${api.adminPassword}\n`,
    );
    expect(login).toMatchObject({ code: 0 });
    expect(login.stdout).toContain("'admin' logged in successfully");
    const wrong = await cli(
      ['login', api.grpcAddress, '--username', 'admin', '--password-stdin', '--name', 'x'],
      'nope-nope\n',
    );
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('UNAUTHENTICATED: invalid username or password');
  });

  it('lets the admin set up a tenant project, role, account, cluster and repository', async () => {
    const steps: [string[], string?][] = [
      [
        [
          'proj',
          'create',
          'team-a',
          '--description',
          'tenant a',
          '--src',
          'https://git.example.com/team-a/*',
          '--dest',
          'https://kubernetes.default.svc,team-a-*',
          '--dest-service-account',
          'https://kubernetes.default.svc,team-a-prod,deployer',
        ],
      ],
      [['proj', 'add-destination-service-account', 'team-a', '*', 'team-a-*', 'team-a-system:deployer']],
      [['proj', 'deny-namespace-resource', 'team-a', '', 'ResourceQuota']],
      [['proj', 'create', 'team-b', '--src', '*', '--dest', 'https://kubernetes.default.svc,team-b']],
      [['proj', 'role', 'create', 'team-a', 'developer']],
      [['proj', 'role', 'add-policy', 'team-a', 'developer', '-a', '*', '-o', '*']],
      [['proj', 'role', 'add-group', 'team-a', 'developer', 'tenant-a']],
      [['account', 'create', 'alice', '--groups', 'tenant-a', '--password-stdin'], 'alice-password\n'],
    ];
    for (const [args, input] of steps) {
      const r = await as('admin', args, input);
      expect(r, args.join(' ')).toMatchObject({ code: 0 });
    }
    const tokenFile = path.join(dir, 'cluster-token');
    await writeFile(tokenFile, `${CLUSTER_TOKEN}\n`, { mode: 0o600 });
    const cluster = await as('admin', [
      'cluster',
      'add',
      'https://kubernetes.default.svc',
      '--name',
      'in-cluster',
      '--bearer-token-file',
      tokenFile,
      '-o',
      'json',
    ]);
    expect(cluster.code).toBe(0);
    expect(JSON.parse(cluster.stdout)).toMatchObject({
      server: 'https://kubernetes.default.svc',
      credentialType: 'bearer',
    });
    expect(cluster.stdout).not.toContain(CLUSTER_TOKEN);
    const repoAdd = await as(
      'admin',
      [
        'repo',
        'add',
        'https://git.example.com/team-a/apps.git',
        '--project',
        'team-a',
        '--username',
        'git',
        '--password-stdin',
        '-o',
        'json',
      ],
      `${REPO_PASSWORD}\n`,
    );
    expect(repoAdd, repoAdd.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(repoAdd.stdout)).toMatchObject({
      repo: 'https://git.example.com/team-a/apps.git',
      project: 'team-a',
      hasPassword: true,
    });
    // Argo CD's declarative repository Secret, applied as it is: its name round-trips.
    const secretFile = path.join(dir, 'repo-secret.yaml');
    await writeFile(
      secretFile,
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: team-b-apps\n  namespace: argocd\n  labels: { argocd.argoproj.io/secret-type: repository }\nstringData:\n  url: https://git.example.com/team-b/apps.git\n  project: team-b\n  username: git\n  password: ${REPO_PASSWORD}\n`,
    );
    const applied = await as('admin', ['apply', '-f', secretFile]);
    expect(applied, applied.stderr).toMatchObject({ code: 0 });
    const declared = JSON.parse(
      (
        await as('admin', [
          'repo',
          'get',
          'https://git.example.com/team-b/apps.git',
          '--project',
          'team-b',
          '-o',
          'json',
        ])
      ).stdout,
    );
    expect(declared).toMatchObject({ project: 'team-b', secretName: 'team-b-apps', hasPassword: true });
    const project = JSON.parse((await as('admin', ['proj', 'get', 'team-a', '-o', 'json'])).stdout);
    expect(project.spec.namespaceResourceBlacklist).toEqual([{ kind: 'ResourceQuota' }]);
    expect(project.spec.destinationServiceAccounts).toEqual([
      {
        server: 'https://kubernetes.default.svc',
        namespace: 'team-a-prod',
        defaultServiceAccount: 'deployer',
      },
      { server: '*', namespace: 'team-a-*', defaultServiceAccount: 'team-a-system:deployer' },
    ]);
  });

  it('refuses an invalid destinationServiceAccounts rule with its field path', async () => {
    const r = await as('admin', [
      'proj',
      'add-destination-service-account',
      'team-a',
      '*',
      'team-a-{oops',
      'deployer',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('spec.destinationServiceAccounts[2].namespace');
  });

  it('lets the tenant create and sync an application in its project, and refuses another project', async () => {
    expect(
      await cli(
        ['login', api.grpcAddress, '--username', 'alice', '--password-stdin', '--name', 'alice'],
        'alice-password\n',
      ),
    ).toMatchObject({ code: 0 });
    const create = await as('alice', [
      'app',
      'create',
      'guestbook',
      '--project',
      'team-a',
      '--repo',
      'https://git.example.com/team-a/apps.git',
      '--path',
      'guestbook',
      '--dest-server',
      'https://kubernetes.default.svc',
      '--dest-namespace',
      'team-a-prod',
    ]);
    expect(create, create.stderr).toMatchObject({ code: 0 });
    const refused = await as('alice', [
      'app',
      'create',
      'intruder',
      '--project',
      'team-b',
      '--repo',
      'https://git.example.com/team-b/apps.git',
      '--path',
      'x',
      '--dest-server',
      'https://kubernetes.default.svc',
      '--dest-namespace',
      'team-b',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'PERMISSION_DENIED: permission denied: applications, create, team-b/intruder (alice)',
    );
    // The tenant may not widen its own project's identities either.
    const widen = await as('alice', [
      'proj',
      'add-destination-service-account',
      'team-a',
      '*',
      '*',
      'kube-system:admin',
    ]);
    expect(widen.code).toBe(1);

    const nc = await bus.connect('admin');
    try {
      const sync = await as('alice', ['app', 'sync', 'guestbook', '--async']);
      expect(sync, sync.stderr).toMatchObject({ code: 0 });
      const operationId = sync.stdout.trim();
      const jsm = await nc.jetstreamManager();
      const subject = `${bus.namespace}.cmd.sync.request`;
      const stream = await jsm.streams.find(subject);
      const consumer = await jsm.consumers.add(stream, {
        ack_policy: AckPolicy.None,
        filter_subject: subject,
      });
      const msg = await (await nc.jetstream().consumers.get(stream, consumer.name)).next({ expires: 10_000 });
      expect(msg?.json()).toMatchObject({
        type: 'io.capstan.cmd.sync.request.v1',
        actor: 'user:alice',
        data: { operationId, project: 'team-a', application: { name: 'guestbook', namespace: 'argocd' } },
      });
    } finally {
      await nc.close();
    }
    // A pending operation: every operation (--operations), not yet a deployment of status.history.
    const history = JSON.parse(
      (await as('alice', ['app', 'history', 'guestbook', '--operations', '-o', 'json'])).stdout,
    );
    expect(history[0]).toMatchObject({ initiatedBy: 'user:alice' });
  });

  it('shows only what the tenant may see, over HTTP too', async () => {
    const cfg = await readFile(config, 'utf8');
    const token = /name: alice[\s\S]*?token: (\S+)/.exec(cfg)?.[1];
    expect(token).toBeTruthy();
    const res = await fetch(`${api.httpUrl}/api/v1/applications`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { items: { metadata: { name: string } }[] };
    expect(body.items.map((a) => a.metadata.name)).toEqual(['guestbook']);
    const list = await as('alice', ['app', 'list', '-o', 'name']);
    expect(list.stdout.trim()).toBe('guestbook');
    const audit = await fetch(`${api.httpUrl}/api/v1/audit/access_decisions`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(audit.status).toBe(403);
  });

  it('records each decision in the audit trail, queryable and verifiable from the CLI', async () => {
    const denies = JSON.parse(
      (await as('admin', ['audit', 'query', 'access', '--user', 'alice', '--outcome', 'deny', '-o', 'json']))
        .stdout,
    ) as { fields: Record<string, string> }[];
    expect(denies.map((r) => `${r.fields.action} ${r.fields.object}`)).toEqual(
      expect.arrayContaining(['create team-b/intruder', 'get access_decisions']),
    );
    const allows = JSON.parse(
      (
        await as('admin', [
          'audit',
          'query',
          'access',
          '--user',
          'alice',
          '--outcome',
          'allow',
          '--since',
          '1h',
          '-o',
          'json',
        ])
      ).stdout,
    ) as { fields: Record<string, string> }[];
    const sync = allows.find((r) => r.fields.action === 'sync');
    expect(sync?.fields.policy_line).toBe(
      'project:team-a:1: p, proj:team-a:developer, applications, *, team-a/*, allow',
    );
    const credentials = JSON.parse(
      (await as('admin', ['audit', 'query', 'credentials', '--project', 'team-a', '-o', 'json'])).stdout,
    ) as { fields: Record<string, string> }[];
    expect(credentials[0]?.fields).toMatchObject({
      operation: 'create',
      repo_url: 'https://git.example.com/team-a/apps.git',
    });
    const verify = await as('admin', ['audit', 'verify']);
    expect(verify, verify.stderr).toMatchObject({ code: 0 });
    // Every hash-chained table of the audit schema verifies (settings_changes: Argo CD's settings
    // objects; webhook_deliveries: the git webhook's deliveries; notification_deliveries: Argo CD
    // Notifications' delivery attempts).
    for (const table of [
      'sync_decisions',
      'resource_results',
      'credential_decisions',
      'access_decisions',
      'settings_changes',
      'webhook_deliveries',
      'notification_deliveries',
    ])
      expect(verify.stdout).toMatch(new RegExp(`${table}\\s+ok`));
    expect(verify.stdout.match(/ ok/g)?.length).toBe(7);
  });

  it('bounds a project by a parent from the CLI, refuses a wider child, and shows sync windows', async () => {
    const ok = async (args: string[]) => {
      const r = await as('admin', args);
      expect(r, `${args.join(' ')}: ${r.stderr}`).toMatchObject({ code: 0 });
      return r;
    };
    await ok([
      'proj',
      'create',
      'tenants',
      '--src',
      'https://git.example.com/**',
      '--dest',
      'https://kubernetes.default.svc,tenant-*',
    ]);
    await ok([
      'proj',
      'create',
      'team-c',
      '--parent',
      'tenants',
      '--src',
      'https://git.example.com/team-c/*',
      '--dest',
      'https://kubernetes.default.svc,tenant-c',
    ]);
    const wide = await as('admin', [
      'proj',
      'create',
      'team-d',
      '--parent',
      'tenants',
      '--dest',
      'https://kubernetes.default.svc,kube-system',
    ]);
    expect(wide.code).toBe(2);
    expect(wide.stderr).toContain('spec.destinations[0]');
    expect(wide.stderr).toContain('is not allowed by ancestor project "tenants"');
    // team-b's destination (namespace team-b) is outside tenants: it cannot be moved under it
    const move = await as('admin', ['proj', 'set-parent', 'team-b', 'tenants']);
    expect(move.code).toBe(2);
    await ok(['proj', 'set-parent', 'team-c', '']);
    expect(
      JSON.parse((await ok(['proj', 'get', 'team-c', '-o', 'json'])).stdout).spec.parentProject,
    ).toBeUndefined();

    await ok([
      'proj',
      'windows',
      'add',
      'team-a',
      '--kind',
      'deny',
      '--schedule',
      '* * * * *',
      '--duration',
      '1h',
      '--applications',
      'guestbook',
      '--manual-sync',
    ]);
    const windows = (await ok(['proj', 'windows', 'list', 'team-a'])).stdout;
    expect(windows).toMatch(/^\s*ID\s+STATUS\s+KIND\s+SCHEDULE/);
    expect(windows).toMatch(/0\s+Active\s+deny\s+\* \* \* \* \*\s+1h\s+guestbook/);
    expect((await ok(['app', 'get', 'guestbook'])).stdout).toMatch(
      /SyncWindow:\s+Manual Allowed \(active: team-a\[0\] deny\)/,
    );
    const explained = JSON.parse(
      (await ok(['sync', 'explain', '--app', 'guestbook', '--automated', '-o', 'json'])).stdout,
    );
    expect(explained.checks.find((c: { check: string }) => c.check === 'sync-window')).toMatchObject({
      allowed: false,
      project: 'team-a',
    });
    await ok(['proj', 'windows', 'delete', 'team-a', '0']);
    expect((await ok(['app', 'get', 'guestbook'])).stdout).toMatch(/SyncWindow:\s+Sync Allowed/);
  });

  it('never lets a credential reach logs, outputs or events, and logs out', async () => {
    expect(api.output()).not.toContain(CLUSTER_TOKEN);
    expect(api.output()).not.toContain(REPO_PASSWORD);
    expect(repo.output()).not.toContain(REPO_PASSWORD);
    const logout = await as('alice', ['logout']);
    expect(logout.code).toBe(0);
    const after = await as('alice', ['app', 'list']);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/not logged in|UNAUTHENTICATED/);
  });
});
