// Story: secrets never leak. Canary values serve as a repository password, an SSH private key, a
// cluster bearer token and a cluster TLS client key. Syncs that succeed (git over HTTPS with the
// canary password, to a real kube-apiserver) and syncs that fail (an unreachable SSH repository, two
// unreachable clusters holding the canary token and key) run on the whole stack, with credential
// operations around them. Then every place a secret could end up is searched: each service's logs,
// every table of the database (pg_dump), every message of every JetStream stream, the process table,
// every API response and every CLI output and error. The canaries occur 0 times.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { capstan, type ApiProcess, type CliResult } from './api-harness.js';
import { startRepoAndApi, startSyncProcess, syncProcessEnv } from './control-plane.js';
import type { RepoProcess } from './repo-harness.js';
import type { ServiceProcess } from '../src/infra/index.js';
import { readNamespaceMessages } from './bus-dump.js';

const run = promisify(execFile);
const GIT_PASSWORD = `git-canary-${randomBytes(12).toString('hex')}`;
const CLUSTER_TOKEN = `token-canary-${randomBytes(12).toString('hex')}`;

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  greeting: hello\n`;

/** The lines of a PEM or OpenSSH key body: each is distinctive enough to be searched for alone. */
function keyBodyLines(pem: string): string[] {
  return pem
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length >= 24 && !l.startsWith('-----'));
}

describe('canary: no secret reaches a log, a table, the bus, argv, a response or an error', () => {
  let cluster: KubeCluster;
  let git: GitServer;
  let apps: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let dir: string;
  let repo: RepoProcess;
  let api: ApiProcess;
  let sync: ServiceProcess;
  let config: string;
  let canaries: Record<string, string[]>;
  const outputs: string[] = [];
  const as = async (args: string[], input?: string): Promise<CliResult> => {
    const r = await capstan(config, [...args, '--context', 'admin'], input);
    outputs.push(r.stdout, r.stderr);
    return r;
  };

  beforeAll(async () => {
    cluster = await startCluster({ name: 'canary', log: () => {} });
    await seedTenant(cluster.adminKubeconfig, {
      namespace: 'team-a-prod',
      serviceAccounts: ['deployer'],
      rules: [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
        },
      ],
    });
    git = await startGitServer();
    apps = await git.createRepository('team-a/apps.git', {
      credentials: [{ username: 'git', password: GIT_PASSWORD }],
    });
    await apps.commit({ 'guestbook/config.yaml': configMap('guestbook-ui') });

    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-canary-'));
    config = path.join(dir, 'contexts');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'canary', '-f', path.join(dir, 'id')]);
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=canary',
      '-days',
      '1',
      '-keyout',
      path.join(dir, 'tls.key'),
      '-out',
      path.join(dir, 'tls.crt'),
    ]);
    canaries = {
      'repository password': [GIT_PASSWORD, Buffer.from(`git:${GIT_PASSWORD}`).toString('base64')],
      'SSH private key': keyBodyLines(await readFile(path.join(dir, 'id'), 'utf8')),
      'cluster bearer token': [CLUSTER_TOKEN],
      'cluster TLS key': keyBodyLines(await readFile(path.join(dir, 'tls.key'), 'utf8')),
    };

    db = await createTestDatabase('capstan_canary');
    bus = await createTestBus('canary');
    ({ repo, api } = await startRepoAndApi({ databaseUrl: db.url, bus, cacheDir: path.join(dir, 'cache') }));
    // Two attempts are enough for the failing syncs to fail (the default five, with backoff, spent
    // most of the test's time waiting for clusters that never answer).
    sync = await startSyncProcess(syncProcessEnv(db.url, bus, { api, repo }), [
      '--enable-impersonation',
      '--sync-max-attempts=2',
    ]);
  }, 300_000);

  afterAll(async () => {
    await sync?.stop();
    await api?.stop();
    await repo?.stop();
    await git?.close();
    await bus?.cleanup();
    await db?.drop();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs succeeding and failing syncs and credential operations with the canaries', async () => {
    const login = await capstan(
      config,
      ['login', api.grpcAddress, '--username', 'admin', '--password-stdin', '--name', 'admin'],
      `${api.adminPassword}\n`,
    );
    expect(login, login.stderr).toMatchObject({ code: 0 });
    const tokenFile = path.join(dir, 'token');
    const caFile = path.join(dir, 'ca.pem');
    await writeFile(tokenFile, `${cluster.controlPlaneToken}\n`, { mode: 0o600 });
    await writeFile(path.join(dir, 'canary-token'), `${CLUSTER_TOKEN}\n`, { mode: 0o600 });
    await writeFile(caFile, cluster.caPem);
    const unreachable = (port: number) => `https://127.0.0.1:${port}`;
    const app = (name: string, repoUrl: string, destName: string) => [
      'app',
      'create',
      name,
      '--project',
      'team-a',
      '--repo',
      repoUrl,
      '--path',
      'guestbook',
      '--revision',
      'main',
      '--dest-name',
      destName,
      '--dest-namespace',
      'team-a-prod',
    ];
    const sshUrl = 'ssh://git@127.0.0.1:1/team-a/private.git';
    const steps: [string[], string?][] = [
      [
        [
          'cluster',
          'add',
          cluster.server,
          '--name',
          'real',
          '--bearer-token-file',
          tokenFile,
          '--ca-file',
          caFile,
        ],
      ],
      [
        [
          'cluster',
          'add',
          unreachable(1),
          '--name',
          'by-token',
          '--bearer-token-file',
          path.join(dir, 'canary-token'),
        ],
      ],
      [
        [
          'cluster',
          'add',
          unreachable(2),
          '--name',
          'by-cert',
          '--cert-file',
          path.join(dir, 'tls.crt'),
          '--key-file',
          path.join(dir, 'tls.key'),
          '--ca-file',
          caFile,
        ],
      ],
      [
        [
          'proj',
          'create',
          'team-a',
          '--src',
          '*',
          '--dest',
          '*,team-a-*',
          '--dest-service-account',
          '*,team-a-prod,deployer',
        ],
      ],
      [
        ['repo', 'add', apps.url, '--project', 'team-a', '--username', 'git', '--password-stdin'],
        `${GIT_PASSWORD}\n`,
      ],
      [['repo', 'add', sshUrl, '--project', 'team-a', '--ssh-private-key-path', path.join(dir, 'id')]],
      [app('guestbook', apps.url, 'real')],
      [app('over-ssh', sshUrl, 'real')],
      [app('to-token-cluster', apps.url, 'by-token')],
      [app('to-cert-cluster', apps.url, 'by-cert')],
    ];
    for (const [args, input] of steps) {
      const r = await as(args, input);
      expect(r, `${args.join(' ')}: ${r.stderr}`).toMatchObject({ code: 0 });
    }

    const synced = await as(['app', 'sync', 'guestbook', '--timeout', '120', '-o', 'json']);
    expect(synced, `${synced.stderr}\n${sync.output().slice(-3000)}`).toMatchObject({ code: 0 });
    for (const failing of ['over-ssh', 'to-token-cluster', 'to-cert-cluster']) {
      const r = await as(['app', 'sync', failing, '--timeout', '120', '-o', 'json']);
      expect(r.code, `${failing} should fail: ${r.stdout}`).not.toBe(0);
    }
    // Credential operations, succeeding and failing, and every read of them.
    for (const args of [
      ['repo', 'get', apps.url, '--project', 'team-a', '-o', 'json'],
      ['repo', 'list', '-o', 'json'],
      ['cluster', 'get', unreachable(1), '-o', 'json'],
      ['cluster', 'get', unreachable(2), '-o', 'json'],
      ['cluster', 'list', '-o', 'json'],
      ['app', 'get', 'over-ssh', '-o', 'json'],
      ['app', 'get', 'to-token-cluster', '-o', 'json'],
      ['app', 'history', 'to-cert-cluster', '-o', 'json'],
      ['audit', 'query', 'credentials', '-o', 'json'],
      ['audit', 'query', 'sync', '-o', 'json'],
      ['audit', 'query', 'resources', '-o', 'json'],
    ]) {
      const r = await as(args);
      expect(r, `${args.join(' ')}: ${r.stderr}`).toMatchObject({ code: 0 });
    }
    const refused = await as(
      ['repo', 'add', apps.url, '--project', 'team-a', '--username', 'git', '--password-stdin'],
      `${GIT_PASSWORD}\n`,
    );
    expect(refused.code).not.toBe(0);
    const token = /name: admin[\s\S]*?token: (\S+)/.exec(await readFile(config, 'utf8'))?.[1];
    for (const p of [
      '/api/v1/applications',
      '/api/v1/repositories',
      '/api/v1/clusters',
      '/api/v1/audit/credential_decisions',
    ]) {
      const res = await fetch(`${api.httpUrl}${p}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, p).toBe(200);
      outputs.push(await res.text());
    }
    // Several syncs, two of them failing against clusters that do not answer, and every search.
  }, 180_000);

  it('finds no canary in logs, tables, the bus, the process table, responses or errors', async () => {
    const { stdout: processes } = await run('ps', ['-eo', 'args', '--no-headers'], { maxBuffer: 1 << 26 });
    const { stdout: tables } = await run('pg_dump', ['--data-only', db.url], { maxBuffer: 1 << 28 });
    const places: Record<string, string> = {
      'api log': api.output(),
      'repo log': repo.output(),
      'sync log': sync.output(),
      'process table': processes,
      'database (pg_dump)': tables,
      'JetStream streams': (await readNamespaceMessages(bus)).join('\n'),
      'API responses and CLI output': outputs.join('\n'),
    };
    // The searches can fail: the canaries are where they should be (the sealed rows are non-empty).
    expect(tables).toContain('team-a');
    expect(places['JetStream streams']).toContain('io.capstan.sync.succeeded.v1');
    const found: string[] = [];
    for (const [secret, needles] of Object.entries(canaries)) {
      expect(needles.length, secret).toBeGreaterThan(0);
      for (const [place, text] of Object.entries(places)) {
        if (needles.some((n) => text.includes(n))) found.push(`${secret} in ${place}`);
      }
    }
    expect(found).toEqual([]);
  });
});
