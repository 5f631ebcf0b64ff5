// Story (issue 16, git webhooks): an operator puts the webhook secret into argocd-secret with
// `capstan apply -f`; an automated Application is synced at main's commit; a push to the git server
// is followed by a Gitea-shaped delivery to POST /api/webhook, and the Application is synced at the
// new commit, with the repo service's polling switched off and the sync service's resync minutes
// away, so only the webhook can have told it. A delivery with a wrong signature is refused and
// changes nothing; every delivery is in `capstan audit query webhooks`. Every service is its own
// process, on real PostgreSQL, NATS, git and a real kube-apiserver.
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppsV1Api } from '@kubernetes/client-node';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import {
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
const SECRET = 'gitea-webhook-secret-for-the-story';
const deployment = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers:
        - name: web
          image: ${image}
`;

interface AppView {
  status?: { sync?: { status?: string; revision?: string } };
}

describe('webhook story: a push announced by the git server is synced at once', () => {
  let cluster: KubeCluster;
  let apps: AppsV1Api;
  let controllers: WorkloadControllers;
  let git: GitServer;
  let repo: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let dir: string;
  let plane: ControlPlane;
  let config: string;
  const as = (args: string[], input?: string) => capstan(config, ['--context', 'admin', ...args], input);
  const file = async (name: string, content: string) => {
    const p = path.join(dir, name);
    await writeFile(p, content);
    return p;
  };
  const revision = async () => {
    const r = await as(['app', 'get', 'web', '-o', 'json']);
    const s = r.code === 0 ? (JSON.parse(r.stdout) as AppView).status?.sync : undefined;
    return s?.status === 'Synced' ? s.revision : undefined;
  };
  const image = async () =>
    (await apps.readNamespacedDeployment({ namespace: NS, name: 'web' })).spec?.template.spec?.containers[0]
      ?.image;
  /** A Gitea push delivery (Gitea sends Gogs' and GitHub's event headers too). */
  const deliver = (before: string, after: string, secret = SECRET) => {
    const body = JSON.stringify({
      ref: 'refs/heads/main',
      before,
      after,
      repository: {
        name: 'apps',
        full_name: 'shop/apps',
        html_url: `${git.baseUrl}/shop/apps`,
        clone_url: repo.url,
        default_branch: 'main',
      },
      commits: [{ id: after, message: 'web 2.0', modified: ['web/deploy.yaml'] }],
    });
    const signature = createHmac('sha256', secret).update(body).digest('hex');
    return fetch(`${plane.api.httpUrl}/api/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gitea-event': 'push',
        'x-gogs-event': 'push',
        'x-github-event': 'push',
        'x-gitea-signature': signature,
        'x-gogs-signature': signature,
      },
      body,
    });
  };

  beforeAll(async () => {
    cluster = await startCluster({ name: 'webhook-story', log: () => {} });
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
    await repo.commit({ 'web/deploy.yaml': deployment('registry.example.com/web:1.0') });
    db = await createTestDatabase('capstan_webhook_story');
    bus = await createTestBus('webhookstory');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-webhook-story-'));
    config = path.join(dir, 'contexts');
    plane = await startControlPlane({
      databaseUrl: db.url,
      bus,
      cacheDir: path.join(dir, 'cache'),
      // No polling: only a push announcement can make the repo service look again.
      repoEnv: { CAPSTAN_POLL_INTERVAL_MS: '0', CAPSTAN_REVISION_CACHE_TTL_MS: '0' },
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

  it('takes the webhook secret from an applied argocd-secret', async () => {
    const r = await as([
      'apply',
      '-f',
      await file(
        'argocd-secret.yaml',
        `apiVersion: v1\nkind: Secret\nmetadata: { name: argocd-secret, namespace: argocd }\nstringData:\n  webhook.gogs.secret: ${SECRET}\n`,
      ),
    ]);
    ok(r, 'apply argocd-secret');
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it('syncs an automated Application at the pushed commit once the git server announces the push', async () => {
    const first = await repo.sha('main');
    ok(
      await as([
        'app',
        'create',
        '-f',
        await file(
          'web.yaml',
          `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: web, namespace: argocd }
spec:
  project: shop
  source: { repoURL: '${repo.url}', path: web, targetRevision: main }
  destination: { name: story, namespace: ${NS} }
  syncPolicy: { automated: {} }
`,
        ),
      ]),
      'app create',
    );
    await eventually(`web synced at ${first}\n${plane.output()}`, async () =>
      (await revision()) === first ? true : undefined,
    );
    expect(await image()).toBe('registry.example.com/web:1.0');

    const second = await repo.commit({ 'web/deploy.yaml': deployment('registry.example.com/web:2.0') });
    // A forged announcement is refused and changes nothing.
    const forged = await deliver(first, second, 'not-the-secret');
    expect(forged.status).toBe(401);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await revision()).toBe(first);

    const pushedAt = Date.now();
    const res = await deliver(first, second);
    expect(res.status).toBe(200);
    await eventually(
      `web synced at ${second}\n${plane.output()}`,
      async () => ((await revision()) === second ? true : undefined),
      60_000,
    );
    expect(await image()).toBe('registry.example.com/web:2.0');
    // Polling is off and the sync service's resync (timeout.reconciliation) is 180 s away.
    expect(Date.now() - pushedAt).toBeLessThan(60_000);
  }, 180_000);

  it('lists every delivery in the audit trail, without the secret', async () => {
    const r = await as(['audit', 'query', 'webhooks', '-o', 'json']);
    ok(r, 'audit query webhooks');
    const rows = (JSON.parse(r.stdout) as { fields: Record<string, unknown> }[]).map((x) => x.fields);
    expect(rows.map((f) => [f.provider, f.outcome, f.http_status])).toEqual([
      ['gogs', 'accepted', 200],
      ['gogs', 'refused', 401],
    ]);
    expect(rows[0]).toMatchObject({ revision: 'main', applications: ['argocd/web'] });
    expect(r.stdout).not.toContain(SECRET);
  });
});
