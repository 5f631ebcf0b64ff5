// Story: an Argo CD user brings a multi-source Application — a chart in one repository whose
// production values live in another, private, repository (`ref: values`, `$values/envs/prod/values.yaml`).
// The values repository needs a credential scoped to the Application's project; another project's
// credential for the same URL exists and must not be used (proposal 002, per source). The
// Application goes in with `capstan app create -f`, comes back with its sources, syncs to a real
// kube-apiserver as the tenant's ServiceAccount with one revision per source, rolls back to its
// first deployment, syncs the values source at a chosen commit (`--revisions SHA --source-positions 2`,
// as argocd), and a `$values/../` escape is refused with its field path. The api, repo (real
// helm) and sync services run as processes on real PostgreSQL, NATS and git.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { addCluster, loginAdmin } from './cli-setup.js';
import { capstan, type ApiProcess, type CliResult } from './api-harness.js';
import { startRepoAndApi, startSyncProcess, syncProcessEnv } from './control-plane.js';
import type { RepoProcess } from './repo-harness.js';
import type { ServiceProcess } from '../src/infra/index.js';

const NS = 'team-a-prod';
const PASSWORD_A = `values-a-${randomBytes(6).toString('hex')}`;
const PASSWORD_B = `values-b-${randomBytes(6).toString('hex')}`;

const TEMPLATE = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  replicas: {{ .Values.replicas | quote }}
  env: {{ .Values.env | quote }}
`;

const application = (chartsUrl: string, valuesUrl: string, valueFile: string) =>
  JSON.stringify({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'web', namespace: 'argocd' },
    spec: {
      project: 'team-a',
      destination: { name: 'multi', namespace: NS },
      sources: [
        { repoURL: chartsUrl, path: 'web', targetRevision: 'main', helm: { valueFiles: [valueFile] } },
        { repoURL: valuesUrl, targetRevision: 'main', ref: 'values' },
      ],
    },
  });

describe('multi-source story: a chart with $values files from a project-scoped private repository', () => {
  let cluster: KubeCluster;
  let git: GitServer;
  let charts: TestRepository;
  let values: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let dir: string;
  let repo: RepoProcess;
  let api: ApiProcess;
  let sync: ServiceProcess;
  let config: string;
  let chartsSha: string;
  let firstValuesSha: string;
  let secondValuesSha: string;
  const as = (args: string[], input?: string) => capstan(config, [...args, '--context', 'admin'], input);
  const ok = (r: CliResult, what: string) =>
    expect(r, `${what}: ${r.stderr}\n${repo?.output() ?? ''}`).toMatchObject({ code: 0 });
  const file = async (name: string, content: string) => {
    const p = path.join(dir, name);
    await writeFile(p, content, { mode: 0o600 });
    return p;
  };
  const getApp = async () => {
    const r = await as(['app', 'get', 'web', '-o', 'json']);
    ok(r, 'app get web');
    return JSON.parse(r.stdout) as {
      spec: { sources: Record<string, unknown>[] };
      status: {
        sync?: { revisions?: string[]; revision?: string };
        operationState?: { syncResult?: { revisions?: string[]; sources?: unknown[] } };
        history?: { id: string | number; revisions?: string[] }[];
      };
    };
  };
  const settings = async () =>
    (
      await cluster.adminKubeconfig
        .makeApiClient(CoreV1Api)
        .readNamespacedConfigMap({ name: 'web-settings', namespace: NS })
    ).data;

  beforeAll(async () => {
    cluster = await startCluster({ name: 'multi', log: () => {} });
    await seedTenant(cluster.adminKubeconfig, {
      namespace: NS,
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
    charts = await git.createRepository('team-a/charts.git');
    chartsSha = await charts.commit({
      'web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 0.1.0\n',
      'web/values.yaml': 'replicas: 1\nenv: none\n',
      'web/templates/cm.yaml': TEMPLATE,
    });
    // Only team-a's user may read it; team-b's stored password is not the server's.
    values = await git.createRepository('shared/values.git', {
      credentials: [
        { username: 'team-a', password: PASSWORD_A },
        { username: 'team-b', password: `${PASSWORD_B}-rotated` },
      ],
    });
    firstValuesSha = await values.commit({ 'envs/prod/values.yaml': 'replicas: 3\nenv: prod\n' });
    db = await createTestDatabase('capstan_multi_source_story');
    bus = await createTestBus('multisource');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-multi-source-'));
    config = path.join(dir, 'contexts');
    ({ repo, api } = await startRepoAndApi({
      databaseUrl: db.url,
      bus,
      cacheDir: path.join(dir, 'cache'),
      repoEnv: { CAPSTAN_REVISION_CACHE_TTL_MS: '0' },
    }));
    sync = await startSyncProcess(syncProcessEnv(db.url, bus, { api, repo }), ['--enable-impersonation']);
    await loginAdmin(config, api);
    await addCluster(config, dir, cluster, 'multi');
    const steps: [string[], string?][] = [
      [
        [
          'proj',
          'create',
          'team-a',
          '--src',
          `${git.baseUrl}/team-a/*`,
          '--src',
          `${git.baseUrl}/shared/*`,
          '--dest',
          `${cluster.server},team-a-*`,
          '--dest-service-account',
          `${cluster.server},${NS},deployer`,
        ],
      ],
      [
        [
          'proj',
          'create',
          'team-b',
          '--src',
          `${git.baseUrl}/shared/*`,
          '--dest',
          `${cluster.server},team-b-*`,
        ],
      ],
      [
        ['repo', 'add', values.url, '--project', 'team-b', '--username', 'team-b', '--password-stdin'],
        `${PASSWORD_B}\n`,
      ],
      [
        ['repo', 'add', values.url, '--project', 'team-a', '--username', 'team-a', '--password-stdin'],
        `${PASSWORD_A}\n`,
      ],
    ];
    for (const [args, input] of steps) ok(await as(args, input), args.join(' '));
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

  it('creates the Application from its manifest and gets it back with both sources', async () => {
    const manifest = await file(
      'web.json',
      application(charts.url, values.url, '$values/envs/prod/values.yaml'),
    );
    ok(await as(['app', 'create', '-f', manifest]), 'app create -f');
    const app = await getApp();
    expect(app.spec.sources).toEqual([
      expect.objectContaining({
        repoURL: charts.url,
        path: 'web',
        helm: expect.objectContaining({ valueFiles: ['$values/envs/prod/values.yaml'] }),
      }),
      expect.objectContaining({ repoURL: values.url, targetRevision: 'main', ref: 'values' }),
    ]);
    expect(app.spec).not.toHaveProperty('source');
  });

  it("syncs as the tenant with the values repository read through team-a's credential, one revision per source", async () => {
    const r = await as(['app', 'sync', 'web', '--timeout', '120', '-o', 'json']);
    ok(r, 'app sync web');
    expect(JSON.parse(r.stdout)).toMatchObject({
      phase: 'Succeeded',
      revisions: [chartsSha, firstValuesSha],
    });
    expect(await settings()).toEqual({ replicas: '3', env: 'prod' });
    const app = await getApp();
    expect(app.status.operationState?.syncResult?.revisions).toEqual([chartsSha, firstValuesSha]);
    expect(app.status.operationState?.syncResult?.sources).toHaveLength(2);
    expect(app.status.history?.map((h) => h.revisions)).toEqual([[chartsSha, firstValuesSha]]);
    // The reconciler compares at both commits too (status.sync.revisions).
    await expect
      .poll(async () => (await getApp()).status.sync?.revisions, { timeout: 60_000, interval: 500 })
      .toEqual([chartsSha, firstValuesSha]);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // The repo service's own record of the two credentials for the values repository.
      const stored = await client.query<{ id: string; project: string }>(
        'select id, project from repo.credentials',
      );
      const byProject = Object.fromEntries(stored.rows.map((c) => [c.project, c.id]));
      expect(Object.keys(byProject).sort()).toEqual(['team-a', 'team-b']);
      const { rows } = await client.query<{ project: string; chosen_id: string | null; reason: string }>(
        `select project, chosen_id, reason from audit.credential_decisions
          where operation = 'lookup' and repo_url = $1 order by id`,
        [values.url],
      );
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((d) => d.project === 'team-a' && d.chosen_id === byProject['team-a'])).toBe(true);
      expect(rows.map((d) => d.chosen_id)).not.toContain(byProject['team-b']);
      expect(rows[0]?.reason).toBe('project-match');
    } finally {
      await client.end();
    }
  });

  it('syncs a new commit of the values repository, then rolls back to the first deployment', async () => {
    const second = await values.commit({ 'envs/prod/values.yaml': 'replicas: 5\nenv: prod-v2\n' });
    secondValuesSha = second;
    const r = await as(['app', 'sync', 'web', '--timeout', '120', '-o', 'json']);
    ok(r, 'app sync web (second)');
    expect(JSON.parse(r.stdout)).toMatchObject({ phase: 'Succeeded', revisions: [chartsSha, second] });
    expect(await settings()).toEqual({ replicas: '5', env: 'prod-v2' });
    const back = await as(['app', 'rollback', 'web', '0', '--timeout', '120']);
    ok(back, 'app rollback web 0');
    await expect.poll(settings, { timeout: 60_000, interval: 500 }).toEqual({ replicas: '3', env: 'prod' });
    const history = (await getApp()).status.history ?? [];
    expect(history.at(-1)?.revisions).toEqual([chartsSha, firstValuesSha]);
  });

  it("syncs the values source at a chosen commit with argocd's --revisions/--source-positions, recorded per source", async () => {
    const third = await values.commit({ 'envs/prod/values.yaml': 'replicas: 7\nenv: prod-v3\n' });
    // The values repository's HEAD is the third commit; the sync pins source 2 at the second.
    const r = await as([
      'app',
      'sync',
      'web',
      '--revisions',
      secondValuesSha,
      '--source-positions',
      '2',
      '--timeout',
      '120',
      '-o',
      'json',
    ]);
    ok(r, 'app sync web --revisions --source-positions 2');
    expect(JSON.parse(r.stdout)).toMatchObject({
      phase: 'Succeeded',
      revisions: [chartsSha, secondValuesSha],
    });
    expect(await settings()).toEqual({ replicas: '5', env: 'prod-v2' });
    const app = await getApp();
    expect(app.status.history?.at(-1)?.revisions).toEqual([chartsSha, secondValuesSha]);
    expect(app.status.operationState?.syncResult?.revisions).toEqual([chartsSha, secondValuesSha]);
    // Not the values repository's HEAD: the reconciler compares at the targets and says so.
    await expect
      .poll(async () => (await getApp()).status.sync?.revisions, { timeout: 60_000, interval: 500 })
      .toEqual([chartsSha, third]);
    // What cannot be applied is refused before anything is synced, with Argo CD's messages.
    const unpaired = await as(['app', 'sync', 'web', '--revisions', third]);
    expect(unpaired.code).not.toBe(0);
    expect(unpaired.stderr).toContain(
      'While using --revisions and --source-positions, length of values for both flags should be same.',
    );
    const outOfRange = await as(['app', 'sync', 'web', '--revisions', third, '--source-positions', '3']);
    expect(outOfRange.code).not.toBe(0);
    expect(outOfRange.stderr).toContain('source position is out of range');
    const single = await as(['app', 'sync', 'web', '--revision', third]);
    expect(single.code).not.toBe(0);
    expect(single.stderr).toContain('--source-positions');
    expect(await settings()).toEqual({ replicas: '5', env: 'prod-v2' });
  });

  it('refuses a $values/../ escape with its field path, and source beside sources', async () => {
    const escape = JSON.parse(application(charts.url, values.url, '$values/../../etc/passwd')) as {
      metadata: { name: string };
      spec: Record<string, unknown>;
    };
    escape.metadata.name = 'escape';
    const refused = await as(['app', 'create', '-f', await file('escape.json', JSON.stringify(escape))]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('spec.sources[0].helm.valueFiles[0]');
    expect(refused.stderr).toContain('must resolve inside the repository of $values');
    const both = { ...escape, metadata: { name: 'both' } };
    both.spec = { ...escape.spec, source: { repoURL: charts.url, path: 'web' } };
    (both.spec.sources as { helm?: unknown }[])[0]!.helm = undefined;
    const twice = await as(['app', 'create', '-f', await file('both.json', JSON.stringify(both))]);
    expect(twice.code).not.toBe(0);
    expect(twice.stderr).toContain('spec.source: source and sources are both set');
  });
});
