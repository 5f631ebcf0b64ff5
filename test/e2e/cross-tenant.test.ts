// Story: two tenants share one control plane. Alice administers project team-a, Bob project team-b.
// Alice tries every operation of the API on every object of team-b — its Applications, its project,
// its repository credential, its cluster, its audit rows, a sync — by name, by take-over through
// apply, and by listing. Every attempt is refused, none changes anything of team-b, and every
// refusal that reached an authorisation decision is a deny row in audit.access_decisions.
// The api and repo services run as their own processes on real PostgreSQL and NATS, driven through
// the `capstan` CLI as a tenant would.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import type { RepoProcess } from './repo-harness.js';
import { capstan, type ApiProcess, type CliResult } from './api-harness.js';
import { startRepoAndApi } from './control-plane.js';

const B_REPO = 'https://git.example.com/team-b/apps.git';
const B_PASSWORD = `b-canary-${randomBytes(8).toString('hex')}`;
const B_CLUSTER = 'https://team-b.cluster.example.com';
const B_CLUSTER_TOKEN = `b-cluster-canary-${randomBytes(8).toString('hex')}`;

/** A refusal: non-zero exit, a denial or not-found, and nothing of team-b's secrets in the message. */
function expectRefused(r: CliResult, what: string): void {
  expect(r.code, `${what} should be refused:\n${r.stdout}`).not.toBe(0);
  expect(r.stderr, what).toMatch(/PERMISSION_DENIED|NOT_FOUND|INVALID_ARGUMENT|ALREADY_EXISTS/);
  expect(r.stderr + r.stdout, what).not.toContain(B_PASSWORD);
  expect(r.stderr + r.stdout, what).not.toContain(B_CLUSTER_TOKEN);
}

describe('cross-tenant matrix: a tenant can reach nothing of another tenant', () => {
  let db: TestDatabase;
  let bus: TestBus;
  let repo: RepoProcess;
  let api: ApiProcess;
  let dir: string;
  let config: string;
  const as = (ctx: string, args: string[], input?: string) =>
    capstan(config, ['--context', ctx, ...args], input);
  const file = async (name: string, content: string) => {
    const p = path.join(dir, name);
    await writeFile(p, content, { mode: 0o600 });
    return p;
  };

  beforeAll(async () => {
    db = await createTestDatabase('capstan_matrix');
    bus = await createTestBus('matrix');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-matrix-'));
    config = path.join(dir, 'contexts');
    ({ repo, api } = await startRepoAndApi({ databaseUrl: db.url, bus, cacheDir: path.join(dir, 'cache') }));
    const login = (user: string, password: string) =>
      capstan(
        config,
        ['login', api.grpcAddress, '--username', user, '--password-stdin', '--name', user],
        `${password}\n`,
      );
    expect(await login('admin', api.adminPassword)).toMatchObject({ code: 0 });

    // The platform team sets up two tenants, each the administrator of its own project.
    for (const t of ['a', 'b']) {
      const p = `team-${t}`;
      const steps: [string[], string?][] = [
        [
          [
            'proj',
            'create',
            p,
            '--src',
            `https://git.example.com/${p}/*`,
            '--dest',
            `https://kubernetes.default.svc,${p}`,
            '--dest',
            `https://${p}.cluster.example.com,${p}`,
          ],
        ],
        [['proj', 'role', 'create', p, 'admin']],
        [['proj', 'role', 'add-policy', p, 'admin', '-a', '*', '-o', '*']],
        [['proj', 'role', 'add-policy', p, 'admin', '-r', 'repositories', '-a', '*', '-o', '*']],
        [['proj', 'role', 'add-policy', p, 'admin', '-r', 'clusters', '-a', '*', '-o', '*']],
        [['proj', 'role', 'add-group', p, 'admin', `tenant-${t}`]],
        [
          ['account', 'create', `user-${t}`, '--groups', `tenant-${t}`, '--password-stdin'],
          `${p}-password\n`,
        ],
      ];
      for (const [args, input] of steps) {
        const r = await as('admin', args, input);
        expect(r, `${args.join(' ')}: ${r.stderr}`).toMatchObject({ code: 0 });
      }
      expect(await login(`user-${t}`, `${p}-password`)).toMatchObject({ code: 0 });
    }

    // Bob's objects, created by Bob himself through his project role.
    const bob = (args: string[], input?: string) => as('user-b', args, input);
    const steps: [string[], string?][] = [
      [
        [
          'app',
          'create',
          'app-b',
          '--project',
          'team-b',
          '--repo',
          B_REPO,
          '--path',
          'app',
          '--dest-server',
          'https://kubernetes.default.svc',
          '--dest-namespace',
          'team-b',
        ],
      ],
      [
        ['repo', 'add', B_REPO, '--project', 'team-b', '--username', 'git', '--password-stdin'],
        `${B_PASSWORD}\n`,
      ],
      [
        [
          'cluster',
          'add',
          B_CLUSTER,
          '--name',
          'cluster-b',
          '--project',
          'team-b',
          '--bearer-token-file',
          await file('b-token', `${B_CLUSTER_TOKEN}\n`),
        ],
      ],
    ];
    for (const [args, input] of steps) {
      const r = await bob(args, input);
      expect(r, `${args.join(' ')}: ${r.stderr}`).toMatchObject({ code: 0 });
    }
  }, 240_000);

  afterAll(async () => {
    await api?.stop();
    await repo?.stop();
    await bus?.cleanup();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("refuses every operation of tenant a on tenant b's objects", async () => {
    const alice = (args: string[], input?: string) => as('user-a', args, input);
    const bApp = (name: string, project: string) =>
      [
        'apiVersion: argoproj.io/v1alpha1',
        'kind: Application',
        `metadata: { name: ${name}, namespace: argocd }`,
        'spec:',
        `  project: ${project}`,
        `  source: { repoURL: '${B_REPO}', path: app, targetRevision: HEAD }`,
        `  destination: { server: 'https://kubernetes.default.svc', namespace: ${project} }`,
        '',
      ].join('\n');
    const takeOverSecret = (name: string) =>
      [
        'apiVersion: v1',
        'kind: Secret',
        `metadata: { name: ${name}, namespace: argocd, labels: { argocd.argoproj.io/secret-type: repository } }`,
        'stringData:',
        `  url: ${B_REPO}`,
        '  project: team-a',
        '  username: mallory',
        '  password: mallory-password',
        '',
      ].join('\n');
    const bSecretName = JSON.parse(
      (await as('admin', ['repo', 'get', B_REPO, '--project', 'team-b', '-o', 'json'])).stdout,
    ).secretName as string;
    expect(bSecretName).toMatch(/^repo-\d+$/);

    const attempts: [string, string[], string?][] = [
      // Applications
      ['get app', ['app', 'get', 'app-b']],
      ['history', ['app', 'history', 'app-b']],
      ['sync', ['app', 'sync', 'app-b', '--async']],
      ['delete app', ['app', 'delete', 'app-b', '--yes']],
      [
        'create app in b',
        [
          'app',
          'create',
          'intruder',
          '--project',
          'team-b',
          '--repo',
          B_REPO,
          '--path',
          'x',
          '--dest-server',
          'https://kubernetes.default.svc',
          '--dest-namespace',
          'team-b',
        ],
      ],
      [
        "use b's repository from a's project",
        [
          'app',
          'create',
          'borrow',
          '--project',
          'team-a',
          '--repo',
          B_REPO,
          '--path',
          'x',
          '--dest-server',
          'https://kubernetes.default.svc',
          '--dest-namespace',
          'team-a',
        ],
      ],
      ['take over app by apply', ['apply', '-f', await file('app-b.yaml', bApp('app-b', 'team-a'))]],
      ['update app in b by apply', ['apply', '-f', await file('app-b2.yaml', bApp('app-b', 'team-b'))]],
      // Projects
      ['get project', ['proj', 'get', 'team-b']],
      ['delete project', ['proj', 'delete', 'team-b']],
      [
        'widen destinations',
        ['proj', 'add-destination', 'team-b', 'https://kubernetes.default.svc', 'kube-system'],
      ],
      ['grant itself a role', ['proj', 'role', 'add-group', 'team-b', 'admin', 'tenant-a']],
      ['add a policy', ['proj', 'role', 'add-policy', 'team-b', 'admin', '-a', '*', '-o', '*']],
      // Repository credentials
      ['get credential', ['repo', 'get', B_REPO, '--project', 'team-b']],
      ['remove credential', ['repo', 'rm', B_REPO, '--project', 'team-b']],
      [
        'replace credential',
        ['repo', 'add', B_REPO, '--project', 'team-b', '--username', 'x', '--password-stdin', '--upsert'],
        'mallory-password\n',
      ],
      [
        'take over credential by name',
        ['apply', '-f', await file('secret.yaml', takeOverSecret(bSecretName))],
      ],
      // Clusters
      ['get cluster', ['cluster', 'get', B_CLUSTER]],
      ['remove cluster', ['cluster', 'rm', B_CLUSTER]],
      [
        'take over cluster',
        [
          'cluster',
          'add',
          B_CLUSTER,
          '--name',
          'cluster-b',
          '--project',
          'team-a',
          '--upsert',
          '--bearer-token-file',
          await file('a-token', 'mallory-token\n'),
        ],
      ],
      // Audit rows
      ['read sync decisions', ['audit', 'query', 'sync', '--app', 'app-b']],
      ['read credential decisions', ['audit', 'query', 'credentials', '--project', 'team-b']],
      ['read access decisions', ['audit', 'query', 'access', '--user', 'user-b']],
    ];
    for (const [what, args, input] of attempts) expectRefused(await alice(args, input), what);

    // The CLI reads a project before it edits it; a client that writes blind meets the update check.
    const token = /name: user-a[\s\S]*?token: (\S+)/.exec(await readFile(config, 'utf8'))?.[1];
    const blind = await fetch(`${api.httpUrl}/api/v1/projects/team-b`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        project: {
          metadata: { name: 'team-b' },
          spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
        },
      }),
    });
    expect(blind.status).toBe(403);

    // Lists show only what is hers.
    const names = async (args: string[]) => {
      const r = await alice([...args, '-o', 'json']);
      expect(r, r.stderr).toMatchObject({ code: 0 });
      return JSON.stringify(JSON.parse(r.stdout));
    };
    expect(await names(['app', 'list'])).not.toContain('app-b');
    expect(await names(['proj', 'list'])).not.toContain('team-b');
    expect(await names(['repo', 'list'])).not.toContain('team-b');
    expect(await names(['cluster', 'list'])).not.toContain('cluster-b');
  });

  it('left every object of tenant b as it was', async () => {
    const get = async (args: string[], ctx = 'user-b') => {
      const r = await as(ctx, [...args, '-o', 'json']);
      expect(r, r.stderr).toMatchObject({ code: 0 });
      return JSON.parse(r.stdout);
    };
    expect((await get(['app', 'get', 'app-b'])).spec).toMatchObject({ project: 'team-b' });
    expect(await get(['repo', 'get', B_REPO, '--project', 'team-b'])).toMatchObject({
      project: 'team-b',
      username: 'git',
    });
    expect(await get(['cluster', 'get', B_CLUSTER])).toMatchObject({ project: 'team-b' });
    // A project role cannot grant the project itself (as in Argo CD): the platform team reads it.
    const project = await get(['proj', 'get', 'team-b'], 'admin');
    expect(project.spec.destinations).toHaveLength(2);
    expect(project.spec.roles[0].groups).toEqual(['tenant-b']);
    expect(project.spec.roles[0].policies).toHaveLength(3);
  });

  it('recorded every refused authorisation as a deny in the audit trail', async () => {
    const r = await as('admin', [
      'audit',
      'query',
      'access',
      '--user',
      'user-a',
      '--outcome',
      'deny',
      '--limit',
      '500',
      '-o',
      'json',
    ]);
    expect(r, r.stderr).toMatchObject({ code: 0 });
    const denies = (JSON.parse(r.stdout) as { fields: Record<string, string> }[]).map(
      (row) => `${row.fields.resource} ${row.fields.action} ${row.fields.object}`,
    );
    for (const expected of [
      'applications get team-b/app-b',
      'applications sync team-b/app-b',
      'applications delete team-b/app-b',
      'applications create team-b/intruder',
      'applications update team-b/app-b',
      'projects get team-b',
      'projects delete team-b',
      'projects update team-b',
      'repositories get team-b/' + B_REPO,
      'repositories delete team-b/' + B_REPO,
      'clusters get team-b/' + B_CLUSTER,
      'clusters delete team-b/' + B_CLUSTER,
    ]) {
      expect(denies, `${expected} in ${denies.join('; ')}`).toContain(expected);
    }
    expect(denies.some((d) => d.startsWith('audit get'))).toBe(true);
    const verify = await as('admin', ['audit', 'verify']);
    expect(verify, verify.stderr).toMatchObject({ code: 0 });
  });

  it('never let a secret of tenant b reach a log', () => {
    for (const out of [api.output(), repo.output()]) {
      expect(out).not.toContain(B_PASSWORD);
      expect(out).not.toContain(B_CLUSTER_TOKEN);
    }
  });
});
