// Story: an Argo CD user brings a Helm chart and a kustomize application and tunes them with
// argocd's flags — `capstan app create --helm-set … --values-literal-file …` and
// `--kustomize-image … --nameprefix …` — then syncs them to a real kube-apiserver as the tenant's
// ServiceAccount. The api, repo (real helm and kustomize) and sync services run as processes on
// real PostgreSQL, NATS and git. The inline values hold a secret: it reaches the cluster, but no
// process's command line while the services render. Then a chart from an OCI registry (CNCF
// Distribution built from its Go module, htpasswd) with a credential scoped to the project, while
// another project's credential for the same registry (which the registry refuses) is never used.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { startOciRegistry, type OciRegistry } from '@capstan/test/charts';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { addCluster, loginAdmin } from './cli-setup.js';
import { capstan, type ApiProcess, type CliResult } from './api-harness.js';
import { startRepoAndApi, startSyncProcess, syncProcessEnv } from './control-plane.js';
import type { RepoProcess } from './repo-harness.js';
import type { ServiceProcess } from '../src/infra/index.js';

const NS = 'team-a-prod';
// bcrypt (cost 10) of the passwords, for the registry's htpasswd.
const OCI_PASS = 's3cret-oci-pass';
const OCI_HASH = '$2a$10$Uv4XAiexkMoDVRAWLXG2CuO0IaV1hbPNSTim0sH1RAAMeQay13u6u';
const obtain = (script: string) =>
  execFileSync('bash', [path.resolve(import.meta.dirname, '../scripts', script), '--print-path'], {
    encoding: 'utf8',
  }).trim();
const SECRET = `values-secret-${randomBytes(6).toString('hex')}`;

const CHART_TEMPLATE = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  replicas: {{ .Values.replicas | quote }}
  tag: {{ .Values.image.tag | quote }}
  password: {{ .Values.password | quote }}
`;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 1
  selector: { matchLabels: { app: api } }
  template:
    metadata: { labels: { app: api } }
    spec:
      containers: [{ name: api, image: nginx:1.25 }]
`;

describe('sources story: Helm and kustomize options from the CLI to the cluster', () => {
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
  let registry: OciRegistry;
  const as = (args: string[], input?: string) => capstan(config, [...args, '--context', 'admin'], input);
  const ok = (r: CliResult, what: string) =>
    expect(r, `${what}: ${r.stderr}\n${repo?.output() ?? ''}`).toMatchObject({ code: 0 });
  const file = async (name: string, content: string) => {
    const p = path.join(dir, name);
    await writeFile(p, content, { mode: 0o600 });
    return p;
  };

  beforeAll(async () => {
    cluster = await startCluster({ name: 'sources', log: () => {} });
    await seedTenant(cluster.adminKubeconfig, {
      namespace: NS,
      serviceAccounts: ['deployer'],
      rules: [
        {
          apiGroups: ['', 'apps'],
          resources: ['configmaps', 'deployments'],
          verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
        },
      ],
    });
    git = await startGitServer();
    apps = await git.createRepository('team-a/apps.git');
    await apps.commit({
      'chart/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 0.1.0\n',
      'chart/values.yaml': 'replicas: 1\nimage:\n  tag: stable\npassword: none\n',
      'chart/templates/cm.yaml': CHART_TEMPLATE,
      'kust/kustomization.yaml': 'resources:\n  - deploy.yaml\n',
      'kust/deploy.yaml': DEPLOYMENT,
    });
    db = await createTestDatabase('capstan_sources_story');
    bus = await createTestBus('sourcesstory');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-sources-story-'));
    config = path.join(dir, 'contexts');
    registry = await startOciRegistry({
      registry: obtain('obtain-registry.sh'),
      helm: obtain('obtain-helm.sh'),
      dir: path.join(dir, 'registry'),
      htpasswd: { 'team-a': OCI_HASH },
    });
    await registry.push({ name: 'api', version: '0.3.0' }, 'team-a', OCI_PASS);
    ({ repo, api } = await startRepoAndApi({ databaseUrl: db.url, bus, cacheDir: path.join(dir, 'cache') }));
    sync = await startSyncProcess(syncProcessEnv(db.url, bus, { api, repo }), ['--enable-impersonation']);
    await loginAdmin(config, api);
    await addCluster(config, dir, cluster, 'sources');
    const steps: string[][] = [
      [
        'proj',
        'create',
        'team-a',
        '--src',
        `${git.baseUrl}/team-a/*`,
        '--src',
        `${registry.url}`,
        '--dest',
        `${cluster.server},team-a-*`,
        '--dest-service-account',
        `${cluster.server},${NS},deployer`,
      ],
    ];
    for (const args of steps) ok(await as(args), args.join(' '));
  }, 300_000);

  afterAll(async () => {
    await sync?.stop();
    await api?.stop();
    await repo?.stop();
    await git?.close();
    await registry?.close();
    await bus?.cleanup();
    await db?.drop();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const syncApp = async (name: string) => {
    const r = await as(['app', 'sync', name, '--timeout', '120', '-o', 'json']);
    ok(r, `app sync ${name}`);
    expect(JSON.parse(r.stdout)).toMatchObject({ phase: 'Succeeded' });
  };

  it('syncs a chart with --helm-set, --helm-set-string and inline values, the secret never on a command line', async () => {
    ok(
      await as([
        'app',
        'create',
        'web',
        '--project',
        'team-a',
        '--repo',
        apps.url,
        '--path',
        'chart',
        '--revision',
        'main',
        '--dest-name',
        'sources',
        '--dest-namespace',
        NS,
        '--helm-set',
        'replicas=3',
        '--helm-set-string',
        'image.tag=1.0',
        '--values-literal-file',
        await file('values.yaml', `password: ${SECRET}\n`),
      ]),
      'app create web',
    );
    const seen: string[] = [];
    const sampler = setInterval(() => {
      try {
        seen.push(execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }));
      } catch {
        // a sample lost to a busy machine is not a finding
      }
    }, 50);
    try {
      await syncApp('web');
    } finally {
      clearInterval(sampler);
    }
    const cm = await cluster.adminKubeconfig
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'web-settings', namespace: NS });
    expect(cm.data).toEqual({ replicas: '3', tag: '1.0', password: SECRET });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.join('\n')).not.toContain(SECRET);
  });

  it('refuses a remote value file with its field path, and syncs a kustomize app with --kustomize-image and --nameprefix', async () => {
    const refused = await as(['app', 'set', 'web', '--values', 'https://169.254.169.254/latest/meta-data']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('spec.source.helm.valueFiles[0]');
    ok(
      await as([
        'app',
        'create',
        'api',
        '--project',
        'team-a',
        '--repo',
        apps.url,
        '--path',
        'kust',
        '--revision',
        'main',
        '--dest-name',
        'sources',
        '--dest-namespace',
        NS,
        '--kustomize-image',
        'nginx=nginx:1.27',
        '--nameprefix',
        'prod-',
        '--kustomize-common-label',
        'team=a',
      ]),
      'app create api',
    );
    await syncApp('api');
    const d = await cluster.adminKubeconfig
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: 'prod-api', namespace: NS });
    expect(d.spec?.template.spec?.containers[0]?.image).toBe('nginx:1.27');
    expect(d.metadata?.labels).toMatchObject({ team: 'a' });
  });

  it("syncs a chart from an OCI registry with the project credential, never another project's", async () => {
    // team-b's credential for the same registry comes first and would be refused by the registry.
    ok(await as(['proj', 'create', 'team-b', '--src', registry.url]), 'proj create team-b');
    const addRepo = (project: string, password: string) =>
      as(
        [
          'repo',
          'add',
          registry.url.replace(/^oci:\/\//, ''),
          '--type',
          'helm',
          '--enable-oci',
          '--insecure-oci-force-http',
          '--project',
          project,
          '--username',
          project,
          '--password-stdin',
        ],
        `${password}\n`,
      );
    ok(await addRepo('team-b', 'not-the-registry-password'), 'repo add team-b');
    ok(await addRepo('team-a', OCI_PASS), 'repo add team-a');
    ok(
      await as([
        'app',
        'create',
        'oci-web',
        '--project',
        'team-a',
        '--repo',
        registry.url,
        '--helm-chart',
        'api',
        '--revision',
        '0.3.0',
        '--dest-name',
        'sources',
        '--dest-namespace',
        NS,
      ]),
      'app create oci-web',
    );
    await syncApp('oci-web');
    const cm = await cluster.adminKubeconfig
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'oci-web-api', namespace: NS });
    expect(cm.data).toEqual({ version: '0.3.0', greeting: 'hello' });
  });
});
