// Story: a tenant's Application goes from git to a real kube-apiserver under the tenant's
// ServiceAccount. Every service runs as its own process, configured as in production: the api
// (projects, Applications, clusters and their credentials), the repo service (checkouts with the
// project's credential, rendering) and the sync service (`--enable-impersonation`), on real
// PostgreSQL, NATS, a real git server and a real API server whose audit log says who wrote what.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { effectiveUser, seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { capstan, type ApiProcess } from './api-harness.js';
import { addCluster, loginAdmin } from './cli-setup.js';
import { startRepoAndApi, startSyncProcess, syncProcessEnv } from './control-plane.js';
import type { RepoProcess } from './repo-harness.js';
import type { ServiceProcess } from '../src/infra/index.js';

const GIT_PASSWORD = `git-${randomBytes(8).toString('hex')}`;
const SA = 'system:serviceaccount:team-a-prod:deployer';

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  greeting: hello\n`;

describe('sync story: from git to the cluster as the tenant ServiceAccount', () => {
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
  const as = (args: string[], input?: string) => capstan(config, [...args, '--context', 'admin'], input);

  beforeAll(async () => {
    cluster = await startCluster({ name: 'story', log: () => {} });
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
    await apps.commit({
      'guestbook/config.yaml': `${configMap('guestbook-ui')}---\n${configMap('guestbook-settings')}`,
    });
    db = await createTestDatabase('capstan_sync_story');
    bus = await createTestBus('syncstory');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-sync-story-'));
    config = path.join(dir, 'contexts');
    ({ repo, api } = await startRepoAndApi({ databaseUrl: db.url, bus, cacheDir: path.join(dir, 'cache') }));
    sync = await startSyncProcess(syncProcessEnv(db.url, bus, { api, repo }), ['--enable-impersonation']);
  }, 240_000);

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

  it('syncs the Application rendered from git as the resolved ServiceAccount, every request impersonated', async () => {
    await loginAdmin(config, api);
    await addCluster(config, dir, cluster, 'story');
    const steps: [string[], string?][] = [
      [
        [
          'proj',
          'create',
          'team-a',
          '--src',
          `${git.baseUrl}/team-a/*`,
          '--dest',
          `${cluster.server},team-a-*`,
          '--dest-service-account',
          `${cluster.server},team-a-prod,deployer`,
        ],
      ],
      [
        ['repo', 'add', apps.url, '--project', 'team-a', '--username', 'git', '--password-stdin'],
        `${GIT_PASSWORD}\n`,
      ],
      [
        [
          'app',
          'create',
          'guestbook',
          '--project',
          'team-a',
          '--repo',
          apps.url,
          '--path',
          'guestbook',
          '--revision',
          'main',
          '--dest-name',
          'story',
          '--dest-namespace',
          'team-a-prod',
        ],
      ],
    ];
    for (const [args, input] of steps) {
      const r = await as(args, input);
      expect(r, `${args.join(' ')}: ${r.stderr}`).toMatchObject({ code: 0 });
    }

    const since = await cluster.audit.mark();
    const synced = await as(['app', 'sync', 'guestbook', '--timeout', '120', '-o', 'json']);
    expect(synced, `${synced.stderr}\n${sync.output().slice(-3000)}`).toMatchObject({ code: 0 });
    expect(JSON.parse(synced.stdout)).toMatchObject({ phase: 'Succeeded' });

    const names = (
      await cluster.adminKubeconfig
        .makeApiClient(CoreV1Api)
        .listNamespacedConfigMap({ namespace: 'team-a-prod' })
    ).items.map((c) => c.metadata!.name);
    expect(names).toEqual(expect.arrayContaining(['guestbook-ui', 'guestbook-settings']));

    const events = await cluster.audit.flush({ since });
    const bySync = events.filter((e) => e.user.username === cluster.controlPlaneUsername);
    expect(bySync.length).toBeGreaterThan(0);
    expect(bySync.filter((e) => e.impersonatedUser === undefined)).toEqual([]);
    expect(new Set(bySync.map(effectiveUser))).toEqual(new Set([SA]));

    const history = JSON.parse(
      (await as(['app', 'history', 'guestbook', '--operations', '-o', 'json'])).stdout,
    );
    expect(history[0]).toMatchObject({ phase: 'Succeeded', identity: SA, trigger: 'user' });
    // The successful sync is a deployment of status.history (Argo CD's), with id 0 and its initiator.
    const deployments = JSON.parse((await as(['app', 'history', 'guestbook', '-o', 'json'])).stdout);
    expect(deployments).toEqual([
      expect.objectContaining({ id: 0, initiatedBy: { username: 'admin' }, trigger: 'user' }),
    ]);
  });

  it('records the decision that the offline explain reproduces from the same manifests', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const rows = await client.query<{
        decision: string;
        username: string;
        matched_rule_index: number;
        revision: string;
      }>(
        `select decision, username, matched_rule_index, revision from audit.sync_decisions where application = 'argocd/guestbook'`,
      );
      expect(rows.rows).toHaveLength(1);
      expect(rows.rows[0]).toMatchObject({ decision: 'allow', username: SA, matched_rule_index: 0 });
      expect(rows.rows[0]!.revision).toMatch(/^[0-9a-f]{40}$/);
    } finally {
      await client.end();
    }
    const manifests = path.join(dir, 'argo.yaml');
    await writeFile(
      manifests,
      `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: { name: team-a, namespace: argocd }
spec:
  sourceRepos: ['${git.baseUrl}/team-a/*']
  destinations: [{ server: '${cluster.server}', namespace: 'team-a-*' }]
  destinationServiceAccounts: [{ server: '${cluster.server}', namespace: team-a-prod, defaultServiceAccount: deployer }]
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: guestbook, namespace: argocd }
spec:
  project: team-a
  source: { repoURL: '${apps.url}', path: guestbook, targetRevision: main }
  destination: { name: story, namespace: team-a-prod }
`,
    );
    const r = await capstan(config, [
      'sync',
      'explain',
      '--offline',
      '-f',
      manifests,
      '--app',
      'guestbook',
      '--impersonation',
      'on',
      '--cluster',
      `story=${cluster.server}`,
      '-o',
      'json',
    ]);
    expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(r.stdout)).toMatchObject({
      allowed: true,
      username: SA,
      matchedRule: 0,
      fallback: null,
    });
  });

  it('explains online, from what the api holds, the same identity the sync used', async () => {
    const r = await as(['sync', 'explain', '--app', 'guestbook', '--impersonation', 'on', '-o', 'json']);
    expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(r.stdout)).toMatchObject({
      allowed: true,
      impersonation: true,
      username: SA,
      serviceAccount: { namespace: 'team-a-prod', name: 'deployer' },
      matchedRule: 0,
      fallback: null,
      destination: { server: cluster.server, name: 'story', namespace: 'team-a-prod' },
    });
    const missing = await as(['sync', 'explain', '--app', 'nope', '-o', 'json']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('NOT_FOUND');
  });

  it('never lets the cluster or git credentials reach the sync service output', () => {
    expect(sync.output()).not.toContain(cluster.controlPlaneToken);
    expect(sync.output()).not.toContain(GIT_PASSWORD);
  });
});
