// Story (issue 13, "reconciliation that tells the truth"): a new Application with
// syncPolicy.automated is synced without any push; an admin's kubectl-style edit of a synced
// Deployment (another field manager) turns the Application OutOfSync, as `capstan app get` shows;
// with selfHeal the edit is put back by a self-heal sync, without it the Application stays
// OutOfSync. Live state is read by the sync service's informers as the project's ServiceAccount
// (the API server's audit log says so). Every service is its own process, on real PostgreSQL, NATS,
// git and a real kube-apiserver. It runs no controllers, so the workload controllers' stand-in
// (@capstan/test/kube startWorkloadControllers) writes Deployments' status as the deployment
// controller would: available when the image pulls, past its progress deadline when it never does
// (an image on the .invalid domain). Health comes from Argo CD's rules over that status.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import {
  effectiveUser,
  seedTenant,
  startCluster,
  startWorkloadControllers,
  type KubeCluster,
  type WorkloadControllers,
} from '@capstan/test/kube';
import { capstan } from './api-harness.js';
import { addCluster, loginAdmin } from './cli-setup.js';
import { eventually, ok } from './appset-story-fixtures.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';

const NS = 'shop-prod';
const SA = `system:serviceaccount:${NS}:deployer`;
const deployment = (name: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: 1
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      containers:
        - name: web
          image: registry.example.com/${name}:1.0
`;

const brokenRollout = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: canary
spec:
  replicas: 1
  progressDeadlineSeconds: 3
  selector: { matchLabels: { app: canary } }
  template:
    metadata: { labels: { app: canary } }
    spec:
      containers:
        - name: web
          image: registry.invalid/canary:1.0
`;

interface AppView {
  status?: {
    sync?: { status?: string; revision?: string };
    health?: { status?: string; message?: string };
    resources?: { kind?: string; name?: string; health?: { status?: string; message?: string } }[];
  };
}

describe('reconcile story: drift is seen through watches as the ServiceAccount, and healed when asked', () => {
  let cluster: KubeCluster;
  let apps: AppsV1Api;
  let git: GitServer;
  let repo: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let dir: string;
  let plane: ControlPlane;
  let controllers: WorkloadControllers;
  let config: string;
  const as = (args: string[], input?: string) => capstan(config, ['--context', 'admin', ...args], input);
  const file = async (name: string, content: string) => {
    const p = path.join(dir, name);
    await writeFile(p, content);
    return p;
  };
  /** The Application's sync status as the api shows it (from the sync service's status events). */
  const syncStatus = async (name: string) => {
    const r = await as(['app', 'get', name, '-o', 'json']);
    return r.code === 0 ? (JSON.parse(r.stdout) as AppView).status?.sync?.status : undefined;
  };
  const view = async (name: string) => {
    const r = await as(['app', 'get', name, '-o', 'json']);
    return r.code === 0 ? (JSON.parse(r.stdout) as AppView) : undefined;
  };
  const waitForHealth = (name: string, health: string) =>
    eventually(`${name} ${health}\n${plane.output()}`, async () => {
      const v = await view(name);
      return v?.status?.health?.status === health ? v : undefined;
    });
  const waitForStatus = (name: string, status: string) =>
    eventually(`${name} ${status}\n${plane.output()}`, async () =>
      (await syncStatus(name)) === status ? true : undefined,
    );
  const replicas = async (name: string) =>
    (await apps.readNamespacedDeployment({ namespace: NS, name })).spec?.replicas;
  /** An admin's `kubectl scale`-like edit: a merge patch under kubectl's field manager. */
  const adminScale = (name: string, count: number) =>
    apps.patchNamespacedDeployment(
      { namespace: NS, name, body: { spec: { replicas: count } }, fieldManager: 'kubectl-edit' },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  const createApp = async (name: string, automated: string, extra = '') =>
    ok(
      await as([
        'app',
        'create',
        '-f',
        await file(
          `${name}.yaml`,
          `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: ${name}, namespace: argocd }
spec:
  project: shop
  source: { repoURL: '${repo.url}', path: ${name}, targetRevision: main }
  destination: { name: story, namespace: ${NS} }
  syncPolicy: { automated: ${automated} }
${extra}`,
        ),
      ]),
      `app create ${name}`,
    );

  beforeAll(async () => {
    cluster = await startCluster({ name: 'reconcile-story', log: () => {} });
    apps = cluster.adminKubeconfig.makeApiClient(AppsV1Api);
    controllers = await startWorkloadControllers(cluster.adminKubeconfig);
    await seedTenant(cluster.adminKubeconfig, {
      namespace: NS,
      serviceAccounts: ['deployer'],
      rules: [
        {
          apiGroups: ['apps'],
          resources: ['deployments'],
          verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
        },
      ],
    });
    git = await startGitServer();
    repo = await git.createRepository('shop/apps.git');
    await repo.commit({
      'web/deploy.yaml': deployment('web'),
      'api/deploy.yaml': deployment('api'),
      'cart/deploy.yaml': deployment('cart'),
      'canary/deploy.yaml': brokenRollout,
      'scaled/deploy.yaml': deployment('scaled'),
    });
    db = await createTestDatabase('capstan_reconcile_story');
    bus = await createTestBus('reconcilestory');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-reconcile-story-'));
    config = path.join(dir, 'contexts');
    plane = await startControlPlane({
      databaseUrl: db.url,
      bus,
      cacheDir: path.join(dir, 'cache'),
      repoEnv: { CAPSTAN_REVISION_CACHE_TTL_MS: '0' },
    });
    await loginAdmin(config, plane.api);
    await addCluster(config, dir, cluster, 'story');
    ok(
      await as([
        'proj',
        'create',
        'shop',
        '--src',
        `${git.baseUrl}/shop/*`,
        '--dest',
        `${cluster.server},${NS}`,
        '--dest-service-account',
        `${cluster.server},${NS},deployer`,
      ]),
      'proj create',
    );
  }, 240_000);

  afterAll(async () => {
    await plane?.stop();
    await controllers?.stop();
    await git?.close();
    await bus?.cleanup();
    await db?.drop();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('syncs a new automated Application without any push, as its ServiceAccount, and reads it back through watches as that ServiceAccount', async () => {
    const since = await cluster.audit.mark();
    await createApp('web', '{}');
    await waitForStatus('web', 'Synced');
    expect(await replicas('web')).toBe(1);
    // The automated sync wrote it, and the informer listed and watched it, all as the ServiceAccount.
    // Left out: the cluster admin's requests, which are the workload controllers' stand-in (it
    // watches every namespace and writes status) and the test's own reads.
    const audit = (await cluster.audit.flush({ since })).filter(
      (e) =>
        e.objectRef?.resource === 'deployments' &&
        ['patch', 'list', 'watch'].includes(e.verb) &&
        effectiveUser(e) !== cluster.adminUsername,
    );
    for (const verb of ['patch', 'list', 'watch'])
      expect(audit.filter((e) => e.verb === verb).map(effectiveUser), verb).toContain(SA);
    expect(new Set(audit.map(effectiveUser))).toEqual(new Set([SA]));
  }, 180_000);

  it('turns OutOfSync when an admin scales a synced Deployment by hand, and stays so without selfHeal', async () => {
    await createApp('api', '{}');
    await waitForStatus('api', 'Synced');
    await adminScale('api', 3);
    await waitForStatus('api', 'OutOfSync');
    // Without selfHeal, automation does not sync the same revision again.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await syncStatus('api')).toBe('OutOfSync');
    expect(await replicas('api')).toBe(3);
  }, 180_000);

  it('puts an edit back with selfHeal', async () => {
    await createApp('cart', '{ selfHeal: true }');
    await waitForStatus('cart', 'Synced');
    await adminScale('cart', 4);
    await eventually('the edit put back', async () => ((await replicas('cart')) === 1 ? true : undefined));
    await waitForStatus('cart', 'Synced');
  }, 180_000);

  it('assesses health with Argo CD rules: a rollout whose image never pulls is Progressing, then Degraded past its deadline', async () => {
    await waitForHealth('web', 'Healthy');
    await createApp('canary', '{}');
    await waitForStatus('canary', 'Synced');
    const degraded = await waitForHealth('canary', 'Degraded');
    const resource = degraded.status?.resources?.find((r) => r.kind === 'Deployment');
    expect(resource?.health).toEqual({
      status: 'Degraded',
      message: 'Deployment "canary" exceeded its progress deadline',
    });
  }, 180_000);

  it('ignores what ignoreDifferences names: an HPA-like replicas change leaves the Application Synced', async () => {
    await createApp(
      'scaled',
      '{ selfHeal: true }',
      '  ignoreDifferences: [{ group: apps, kind: Deployment, jsonPointers: [/spec/replicas] }]\n',
    );
    await waitForStatus('scaled', 'Synced');
    await apps.patchNamespacedDeployment(
      {
        namespace: NS,
        name: 'scaled',
        body: { spec: { replicas: 5 } },
        fieldManager: 'kube-controller-manager',
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // The watch sees the change at once; the verdict must stay Synced, and self-heal must not undo it.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await syncStatus('scaled')).toBe('Synced');
    expect(await replicas('scaled')).toBe(5);
  }, 180_000);

  it('rolls back to an earlier deployment: its revision is applied, spec unchanged, so it shows OutOfSync', async () => {
    const image = async () =>
      (await apps.readNamespacedDeployment({ namespace: NS, name: 'roll' })).spec?.template.spec
        ?.containers[0]?.image;
    const first = await repo.commit({ 'roll/deploy.yaml': deployment('roll') });
    const manifest = await file(
      'roll.yaml',
      `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: roll, namespace: argocd }
spec:
  project: shop
  source: { repoURL: '${repo.url}', path: roll, targetRevision: main }
  destination: { name: story, namespace: ${NS} }
`,
    );
    ok(await as(['app', 'create', '-f', manifest]), 'app create roll');
    ok(await as(['app', 'sync', 'roll', '--timeout', '120']), 'first sync');
    await repo.commit({ 'roll/deploy.yaml': deployment('roll').replace(':1.0', ':2.0') });
    ok(await as(['app', 'sync', 'roll', '--timeout', '120']), 'second sync');
    expect(await image()).toBe('registry.example.com/roll:2.0');
    ok(await as(['app', 'rollback', 'roll', '0', '--timeout', '120']), 'rollback');
    expect(await image()).toBe('registry.example.com/roll:1.0');
    // Argo CD: spec.targetRevision stays main, whose commit now differs from what runs.
    await waitForStatus('roll', 'OutOfSync');
    const listed = await as(['app', 'history', 'roll', '-o', 'json']);
    ok(listed, 'history');
    const history = JSON.parse(listed.stdout) as { id: number; revision: string; trigger: string }[];
    expect(history.map((h) => [h.id, h.trigger])).toEqual([
      [0, 'user'],
      [1, 'user'],
      [2, 'rollback'],
    ]);
    expect(history[2]!.revision).toBe(first);
  }, 240_000);
});
