// Story: the web UI in a real browser (Debian's chromium through playwright-core) against the whole
// control plane as processes (startControlPlane) on real PostgreSQL, NATS, git and kube-apiserver.
// An administrator logs in (the session is an HttpOnly cookie no script can read), finds guestbook,
// sees its resource tree, syncs it and watches the progress arrive over the stream (no polling),
// opens a resource's field-level diff after a hand edit of the live object; a tenant of another project is shown a clear denial. Before the first sync
// the Identity panel already says who the sync will write as; a selective sync of one resource
// leaves the others alone; the Deployment's ReplicaSet and Pod (made by the workload stand-in, as
// the controllers would) hang under it in the tree; their events are refused to a ServiceAccount that
// may not list them, and the panel says so; an Application aimed at kube-system that its project no
// longer allows is shown refused with the reason; the Repositories page says who shares a checkout.
// axe-core checks every page (no serious or critical violation). With CAPSTAN_UI_SCREENSHOTS=<dir> the pages are
// saved there as PNGs (docs/ui.md uses them).
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CoreV1Api } from '@kubernetes/client-node';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import {
  seedTenant,
  startCluster,
  startWorkloadControllers,
  type KubeCluster,
  type WorkloadControllers,
} from '@capstan/test/kube';
import { capstan, type CliResult } from './api-harness.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { launchChromium, seriousViolations } from './browser.js';

const GIT_PASSWORD = `git-${randomBytes(8).toString('hex')}`;
const NS = 'team-a-prod';
const SHOTS = process.env.CAPSTAN_UI_SCREENSHOTS;

const manifests = `apiVersion: v1
kind: ConfigMap
metadata:
  name: guestbook-config
data:
  greeting: hello
---
apiVersion: v1
kind: Service
metadata:
  name: guestbook-ui
spec:
  ports: [{ port: 80, targetPort: 80 }]
  selector: { app: guestbook-ui }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: guestbook-ui
spec:
  replicas: 1
  selector:
    matchLabels: { app: guestbook-ui }
  template:
    metadata:
      labels: { app: guestbook-ui }
    spec:
      containers:
        - name: guestbook-ui
          image: gcr.io/heptio-images/ks-guestbook-demo:0.2
          ports: [{ containerPort: 80 }]
`;

describe('ui story: the web UI drives the control plane in a real browser', () => {
  let cluster: KubeCluster;
  let controllers: WorkloadControllers;
  let git: GitServer;
  let apps: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let dir: string;
  let plane: ControlPlane;
  let config: string;
  let browser: Browser;
  let admin: BrowserContext;
  let page: Page;
  const as = (user: string, args: string[], input?: string) =>
    capstan(config, [...args, '--context', user], input);
  const ok = (r: CliResult, what: string) =>
    expect(r, `${what}: ${r.stderr}\n${plane?.output() ?? ''}`).toMatchObject({ code: 0 });
  const file = async (name: string, content: string) => {
    const p = path.join(dir, name);
    await writeFile(p, content, { mode: 0o600 });
    return p;
  };
  const accessible = async (p: Page, what: string) =>
    expect(await seriousViolations(p), `axe on ${what}`).toEqual([]);
  const shot = async (p: Page, name: string) => {
    if (!SHOTS) return;
    await mkdir(SHOTS, { recursive: true });
    await p.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  };
  // axe is injected as a script: the page's own policy (script-src 'self') would refuse it.
  const newContext = () => browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 800 } });
  const login = async (p: Page, user: string, password: string) => {
    await p.goto(plane.api.httpUrl);
    await p.getByLabel('Username').fill(user);
    await p.getByLabel('Password').fill(password);
    await p.getByRole('button', { name: 'Log in' }).click();
  };

  beforeAll(async () => {
    cluster = await startCluster({ name: 'ui', log: () => {} });
    await seedTenant(cluster.adminKubeconfig, {
      namespace: NS,
      serviceAccounts: ['deployer'],
      rules: [
        {
          apiGroups: ['apps'],
          resources: ['deployments'],
          verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
        },
        {
          apiGroups: [''],
          resources: ['services', 'configmaps'],
          verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
        },
        // The tree reads the objects the Deployment owns; events are not granted (the panel says so).
        { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      ],
    });
    controllers = await startWorkloadControllers(cluster.adminKubeconfig, { ownedObjects: true });
    git = await startGitServer();
    apps = await git.createRepository('team-a/apps.git', {
      credentials: [{ username: 'git', password: GIT_PASSWORD }],
    });
    await apps.commit({ 'guestbook/all.yaml': manifests });
    db = await createTestDatabase('capstan_ui_story');
    bus = await createTestBus('uistory');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-ui-story-'));
    config = path.join(dir, 'contexts');
    plane = await startControlPlane({ databaseUrl: db.url, bus, cacheDir: path.join(dir, 'cache') });
    const { api } = plane;
    ok(
      await capstan(
        config,
        ['login', api.grpcAddress, '--username', 'admin', '--password-stdin', '--name', 'admin'],
        `${api.adminPassword}\n`,
      ),
      'admin login',
    );
    const steps: [string[], string?][] = [
      [
        [
          'cluster',
          'add',
          cluster.server,
          '--name',
          'ui',
          '--bearer-token-file',
          await file('token', `${cluster.controlPlaneToken}\n`),
          '--ca-file',
          await file('ca.pem', cluster.caPem),
        ],
      ],
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
          `${cluster.server},${NS},deployer`,
        ],
      ],
      [
        ['repo', 'add', apps.url, '--project', 'team-a', '--username', 'git', '--password-stdin'],
        `${GIT_PASSWORD}\n`,
      ],
      [
        [
          'proj',
          'create',
          'team-b',
          '--src',
          `${git.baseUrl}/team-b/*`,
          '--dest',
          `${cluster.server},team-b`,
        ],
      ],
      [['proj', 'role', 'create', 'team-b', 'admin']],
      [['proj', 'role', 'add-policy', 'team-b', 'admin', '-a', '*', '-o', '*']],
      [['proj', 'role', 'add-group', 'team-b', 'admin', 'tenant-b']],
      [['account', 'create', 'user-b', '--groups', 'tenant-b', '--password-stdin'], 'team-b-password\n'],
    ];
    for (const [args, input] of steps) ok(await as('admin', args, input), args.join(' '));
    const application = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: guestbook, namespace: argocd }
spec:
  project: team-a
  source: { repoURL: '${apps.url}', targetRevision: main, path: guestbook }
  destination: { name: ui, namespace: ${NS} }
`;
    ok(await as('admin', ['apply', '-f', await file('app.yaml', application)]), 'apply Application');
    browser = await launchChromium();
    admin = await newContext();
    page = await admin.newPage();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await controllers?.stop();
    await plane?.stop();
    await git?.close();
    await bus?.cleanup();
    await db?.drop();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('logs in; the session is an HttpOnly, SameSite=Strict cookie that no script can read', async () => {
    await page.goto(plane.api.httpUrl);
    await expect(page.getByLabel('Username')).toBeTruthy();
    await accessible(page, 'login');
    await shot(page, 'login');
    await login(page, 'admin', plane.api.adminPassword);
    await page.getByRole('heading', { name: 'Applications' }).waitFor();
    const session = (await admin.cookies()).find((c) => c.name === 'capstan_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(await page.evaluate<string>('document.cookie')).not.toContain('capstan_session');
    expect(
      await page.evaluate<string>('JSON.stringify(localStorage) + JSON.stringify(sessionStorage)'),
    ).not.toContain(session!.value);
  });

  it('lists guestbook with its project, filters and counts', async () => {
    await page.getByRole('link', { name: 'guestbook' }).waitFor();
    await page.getByText('1 of 1 Applications').waitFor();
    await page.getByRole('group', { name: 'project' }).getByText('team-a').waitFor();
    await accessible(page, 'applications');
    await shot(page, 'applications');
  });

  it('shows the Applications as tiles, the choice kept in the URL', async () => {
    await page.getByRole('group', { name: 'view' }).getByRole('button', { name: 'Tiles' }).click();
    expect(page.url()).toContain('view=tiles');
    const tiles = page.getByRole('region', { name: 'applications' });
    await tiles.getByRole('link', { name: 'guestbook' }).waitFor();
    await tiles.getByText('team-a', { exact: true }).waitFor();
    await accessible(page, 'applications (tiles)');
    await shot(page, 'applications-tiles');
    await page.getByRole('group', { name: 'view' }).getByRole('button', { name: 'List' }).click();
    expect(page.url()).not.toContain('view=tiles');
  });

  it("shows guestbook's resource tree as a graph with health and sync badges", async () => {
    await page.getByRole('link', { name: 'guestbook' }).click();
    await page.getByRole('heading', { name: 'guestbook' }).waitFor();
    await page.getByText('live', { exact: true }).waitFor();
    const tree = page.getByRole('region', { name: 'resource tree' });
    // The reconciler's first comparison names what git holds (OutOfSync before the first sync).
    await tree.getByRole('button', { name: 'Deployment guestbook-ui' }).waitFor({ timeout: 90_000 });
    await tree.getByRole('button', { name: 'ConfigMap guestbook-config' }).waitFor();
    await tree.getByRole('button', { name: 'Service guestbook-ui' }).waitFor();
    await accessible(page, 'application');
  });

  it('says who the first sync will write as before there is any, and that none was recorded yet', async () => {
    await page.getByRole('tab', { name: 'Identity' }).click();
    const next = page.getByRole('region', { name: 'Who the next sync will write as' });
    await next.getByText(/Will write as/).waitFor({ timeout: 30_000 });
    await next.getByText(`system:serviceaccount:${NS}:deployer`).waitFor();
    await next
      .getByRole('table', { name: /rules of the chain/ })
      .getByText('✔ first match')
      .waitFor();
    await page.getByText('No sync yet: the decision is made and recorded at the first sync.').waitFor();
    await accessible(page, 'identity panel before the first sync');
    await page.getByRole('tab', { name: 'Resource tree' }).click();
  });

  it('syncs one selected resource only (a selective sync), leaving the others out of sync', async () => {
    await page.getByRole('button', { name: 'Sync' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sync guestbook' });
    await dialog.getByRole('button', { name: 'None' }).click();
    await dialog.getByRole('checkbox', { name: `ConfigMap ${NS}/guestbook-config` }).check();
    await dialog
      .getByRole('note')
      .getByText(/Selective sync/)
      .waitFor();
    await accessible(page, 'sync dialog with a resource picked');
    await dialog.getByRole('button', { name: 'Synchronize' }).click();
    await page.getByRole('status').getByText('Succeeded').waitFor({ timeout: 120_000 });
    const tree = page.getByRole('region', { name: 'resource tree' });
    await tree
      .getByRole('button', { name: 'ConfigMap guestbook-config' })
      .getByText('Synced')
      .waitFor({ timeout: 60_000 });
    await tree.getByRole('button', { name: 'Deployment guestbook-ui' }).getByText('OutOfSync').waitFor();
    const op = await as('admin', ['app', 'get', 'guestbook', '-o', 'json']);
    ok(op, 'app get');
    const state = (JSON.parse(op.stdout) as { status: { operationState: { operation: unknown } } }).status
      .operationState;
    expect(state.operation).toMatchObject({
      sync: { resources: [{ kind: 'ConfigMap', name: 'guestbook-config', namespace: NS }] },
    });
  });

  it('syncs and shows the progress as the stream brings it, without polling', async () => {
    const reads: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'GET' && /\/api\/v1\/applications\/guestbook(\?|$)/.test(r.url()))
        reads.push(r.url());
    });
    await page.getByRole('button', { name: 'Sync' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sync guestbook' });
    await dialog.getByLabel('Prune').check();
    await accessible(page, 'sync dialog');
    await dialog.getByRole('button', { name: 'Synchronize' }).click();
    await page.getByRole('status').getByText('Succeeded').waitFor({ timeout: 120_000 });
    const tree = page.getByRole('region', { name: 'resource tree' });
    // Only the full sync applies the Deployment.
    await tree
      .getByRole('button', { name: 'Deployment guestbook-ui' })
      .getByText('Synced')
      .waitFor({ timeout: 60_000 });
    expect(reads, 'the page learnt the outcome from the stream, not by asking again').toEqual([]);
  });

  // Waits on the workload stand-in and the bus: minutes on a loaded CI machine, not the default 60 s.
  it("shows the Deployment's ReplicaSet and Pod under it, with health, read as the ServiceAccount", async () => {
    const tree = page.getByRole('region', { name: 'resource tree' });
    const rs = tree.getByRole('button', { name: /^ReplicaSet guestbook-ui-/ });
    const pod = tree.getByRole('button', { name: /^Pod guestbook-ui-/ });
    // The tree is read again when the Application's state moves on; the stand-in may make the
    // objects (and write the ReplicaSet's status) after that: then the page is read afresh once.
    const shown = async () => {
      await pod.waitFor({ timeout: 20_000 });
      await rs.getByText('Healthy').waitFor({ timeout: 20_000 });
    };
    await shown().catch(async () => {
      await page.reload();
      await shown().catch(async (err: Error) => {
        // Say what the page shows instead: the tree's nodes and its notes (a refusal, an error).
        const labels = await tree.getByRole('button').evaluateAll((bs) => bs.map((b) => b.ariaLabel));
        const notes = await page.locator('ul.notes').allInnerTexts();
        throw new Error(`${err.message}\nnodes: ${labels.join(', ')}\nnotes: ${notes.join(' | ')}`);
      });
    });
    // The ServiceAccount may not list EndpointSlices: said under the graph, not read otherwise.
    await page
      .getByRole('list', { name: 'resource tree notes' })
      .getByText(/may not list EndpointSlices/)
      .waitFor();
    await accessible(page, 'application with owned objects');
    await shot(page, 'application');
    await pod.click();
    const panel = page.getByRole('dialog', { name: /^Pod guestbook-ui-/ });
    await panel
      .getByText(`Events cannot be shown: system:serviceaccount:${NS}:deployer may not list events`, {
        exact: false,
      })
      .waitFor({ timeout: 60_000 });
    await accessible(page, 'owned object panel');
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
  }, 180_000);

  it("opens a resource's panel: desired and live manifests and their field-level diff", async () => {
    // Someone changes the live ConfigMap by hand: the panel's diff names the field, git's value and
    // the cluster's (what the server fills in, uid or resourceVersion, is not a difference).
    const core = cluster.adminKubeconfig.makeApiClient(CoreV1Api);
    const live = await core.readNamespacedConfigMap({ namespace: NS, name: 'guestbook-config' });
    const edit = (greeting: string) =>
      core.replaceNamespacedConfigMap({
        namespace: NS,
        name: 'guestbook-config',
        body: { ...live, metadata: { ...live.metadata, resourceVersion: undefined }, data: { greeting } },
      });
    await edit('bonjour');
    await page.getByRole('button', { name: 'ConfigMap guestbook-config' }).click();
    const panel = page.getByRole('dialog', { name: 'ConfigMap guestbook-config' });
    const diff = panel.getByRole('table', { name: /fields that differ/ });
    await diff.getByRole('row', { name: 'data.greeting hello bonjour differs' }).waitFor({ timeout: 60_000 });
    expect(await diff.getByRole('row').count()).toBe(2); // the header and that field only
    await accessible(page, 'resource panel');
    await shot(page, 'resource');
    await panel.getByRole('tab', { name: 'Desired' }).click();
    await panel.getByText('"greeting": "hello"').waitFor();
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
    await edit('hello');
  });

  it('answers who the sync wrote as, and why, in the Identity panel', async () => {
    await page.getByRole('tab', { name: 'Identity' }).click();
    await page.getByText('Writes as').waitFor({ timeout: 30_000 });
    await page.getByText(`system:serviceaccount:${NS}:deployer`).first().waitFor();
    await page
      .getByRole('table', { name: /rules considered/ })
      .getByText('✔ matched')
      .waitFor();
    await accessible(page, 'identity panel');
    await shot(page, 'identity');
  });

  it('shows the history tab and the delete dialog, both accessible', async () => {
    await page.getByRole('tab', { name: 'History and rollback' }).click();
    await page.getByRole('table', { name: /deployments, newest first/ }).waitFor();
    await page.getByRole('button', { name: 'Rollback' }).first().waitFor();
    await accessible(page, 'history tab');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete guestbook' });
    await dialog.getByRole('radio', { name: /Foreground/ }).waitFor();
    await accessible(page, 'delete dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('tab', { name: 'Resource tree' }).click();
  });

  it('finds the sync in the audit explorer, with the hash chain verified', async () => {
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit' }).waitFor();
    await page.getByLabel('application').fill('guestbook');
    await page.getByRole('button', { name: 'Apply' }).click();
    expect(page.url()).toContain('application=guestbook');
    await page
      .getByText(/application=\S*guestbook .*decision=allow/)
      .first()
      .waitFor();
    await page.getByText(/Hash chain verified: \d+ rows intact/).waitFor();
    await accessible(page, 'audit');
    await shot(page, 'audit');
    // The view is a link: opening it again shows the same filtered rows.
    await page.goto(page.url());
    await page
      .getByText(/application=\S*guestbook .*decision=allow/)
      .first()
      .waitFor();
  });

  it("previews what an ApplicationSet generates, with the caller's verdict on each", async () => {
    const set = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: { name: guestbook-envs, namespace: argocd }
spec:
  goTemplate: true
  generators: [{ list: { elements: [{ env: dev }, { env: stage }] } }]
  template:
    metadata: { name: 'guestbook-{{.env}}' }
    spec:
      project: team-a
      source: { repoURL: '${apps.url}', targetRevision: main, path: guestbook }
      destination: { name: ui, namespace: 'team-a-{{.env}}' }
`;
    ok(await as('admin', ['appset', 'create', await file('set.yaml', set)]), 'appset create');
    await page
      .getByRole('navigation', { name: 'main' })
      .getByRole('link', { name: 'ApplicationSets' })
      .click();
    await page.getByRole('link', { name: 'guestbook-envs' }).waitFor();
    await accessible(page, 'applicationsets');
    await page.getByRole('link', { name: 'guestbook-envs' }).click();
    await page.getByRole('button', { name: 'Preview generate' }).click();
    await page.getByRole('status').getByText('2 Applications; all allowed').waitFor({ timeout: 60_000 });
    await page.getByRole('cell', { name: 'guestbook-stage' }).waitFor();
    await accessible(page, 'applicationset');
    await shot(page, 'applicationset');
  });

  it("shows a project with its parent chain, each link's bounds and their intersection", async () => {
    // A child of team-a, made by the admin within team-a's bounds: its chain has two links.
    const child = ['proj', 'create', 'team-a-web', '--parent', 'team-a'];
    const bounds = ['--src', `${git.baseUrl}/team-a/web`, '--dest', `${cluster.server},team-a-web`];
    ok(await as('admin', [...child, ...bounds]), 'proj create team-a-web');
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Projects' }).click();
    await page.getByRole('link', { name: 'team-a', exact: true }).waitFor();
    await accessible(page, 'projects');
    await page.getByRole('link', { name: 'team-a-web', exact: true }).click();
    const chain = page.getByRole('list', { name: /parent chain/ });
    await chain.getByRole('heading', { name: /team-a-web/ }).waitFor();
    await chain.getByText(`${NS} → deployer`).waitFor();
    const graph = page.getByRole('region', { name: 'parent chain graph' });
    await graph.getByText('this project').waitFor();
    await graph.getByRole('group', { name: 'project team-a', exact: true }).waitFor();
    // The api's intersection: team-a-web's own sources and destinations, team-a's ServiceAccount rule.
    const effective = page.getByRole('table', { name: /Effective restrictions: .*team-a-web → team-a/ });
    const row = (name: string) => effective.getByRole('row', { name: new RegExp(`^${name}`) });
    await row('Sources').getByText(`${git.baseUrl}/team-a/web`).waitFor({ timeout: 30_000 });
    await row('Destinations').getByText(`${cluster.server} / team-a-web`).waitFor();
    await row('ServiceAccounts').getByText(`${cluster.server} / ${NS} → deployer`).waitFor();
    expect(await row('ServiceAccounts').getByText('from team-a', { exact: true }).count()).toBe(1);
    await accessible(page, 'project');
    await shot(page, 'project');
  });

  it("creates a project from the form: the api's violation shows by its field, then the fix saves", async () => {
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Projects' }).click();
    await page.getByRole('button', { name: 'New project' }).click();
    const dialog = page.getByRole('dialog', { name: 'New project' });
    const name = dialog.getByLabel('Name', { exact: true });
    await name.fill('Team_C');
    await dialog.getByLabel('Source repositories').fill(`${git.baseUrl}/team-c/*`);
    await dialog.getByLabel('Destinations').fill(`${cluster.server},team-c`);
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.getByText(/must be a DNS subdomain/).waitFor();
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    await accessible(page, 'new project form with an error');
    await shot(page, 'project-form');
    await name.fill('team-c');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'team-c', exact: true }).waitFor();
    expect(page.url()).toContain('/projects/team-c');
    await page
      .getByRole('list', { name: /parent chain/ })
      .getByText(`${cluster.server} / team-c`)
      .waitFor();
    const saved = await as('admin', ['proj', 'get', 'team-c', '-o', 'json']);
    ok(saved, 'proj get team-c');
    expect(saved.stdout).toContain('team-c/*');
  });

  it('lists the clusters and accounts, with their forms accessible', async () => {
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Clusters' }).click();
    await page.getByRole('cell', { name: cluster.server }).waitFor();
    await accessible(page, 'clusters');
    await page.getByRole('button', { name: 'Add cluster' }).click();
    const add = page.getByRole('dialog', { name: 'Add a cluster' });
    await add.getByLabel('Bearer token').waitFor();
    expect(await add.getByLabel('Bearer token').getAttribute('type')).toBe('password');
    await accessible(page, 'add cluster dialog');
    await page.keyboard.press('Escape');
    await add.waitFor({ state: 'detached' });
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Accounts' }).click();
    await page.getByRole('heading', { name: 'user-b' }).waitFor();
    await accessible(page, 'accounts');
    await shot(page, 'accounts');
  });

  // Waits on the workload stand-in and the bus: minutes on a loaded CI machine, not the default 60 s.
  it('shows the kube-system Application its project no longer allows as refused, with the reason', async () => {
    const addons = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: kube-addons, namespace: argocd }
spec:
  project: addons
  source: { repoURL: '${apps.url}', targetRevision: main, path: guestbook }
  destination: { name: ui, namespace: kube-system }
`;
    for (const [args, what] of [
      [
        [
          'proj',
          'create',
          'addons',
          '--src',
          `${git.baseUrl}/team-a/*`,
          '--dest',
          `${cluster.server},kube-system`,
        ],
        'proj',
      ],
      [['apply', '-f', await file('addons.yaml', addons)], 'apply kube-addons'],
      [['proj', 'remove-destination', 'addons', cluster.server, 'kube-system'], 'remove kube-system'],
    ] as const)
      ok(await as('admin', [...args]), what);
    const next = page.getByRole('region', { name: 'Who the next sync will write as' });
    // The sync service learns of the project's change from the bus: open the page until it has.
    for (let attempt = 1; ; attempt++) {
      await page.goto(`${plane.api.httpUrl}/applications/argocd/kube-addons`);
      await page.getByRole('tab', { name: 'Identity' }).click();
      try {
        await next.getByText(/Would be refused/).waitFor({ timeout: 10_000 });
        break;
      } catch (err) {
        if (attempt >= 6) throw err;
      }
    }
    const denies = next.getByRole('list', { name: 'what denies' });
    await denies.getByText(/kube-system/).waitFor();
    await denies.getByText(/project addons/).waitFor();
    await accessible(page, 'identity panel of a refused Application');
    await shot(page, 'identity-denied');
  }, 180_000);

  it('lists repository credentials per project, with the projects that share a checkout', async () => {
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Repositories' }).click();
    const table = page.getByRole('table', { name: 'Project team-a' });
    await table.getByRole('cell', { name: apps.url }).waitFor();
    await table.getByRole('cell', { name: 'username git and password' }).waitFor();
    await table.getByRole('cell', { name: 'only team-a' }).waitFor();
    expect(await page.content()).not.toContain(GIT_PASSWORD);
    await accessible(page, 'repositories');
    await shot(page, 'repositories');
  });

  it('shows a tenant of another project a clear denial, not an error', async () => {
    const ctx = await newContext();
    const p = await ctx.newPage();
    await login(p, 'user-b', 'team-b-password');
    await p.getByRole('heading', { name: 'Applications' }).waitFor();
    await p.getByText('0 of 0 Applications').waitFor();
    await p.goto(`${plane.api.httpUrl}/applications/argocd/guestbook`);
    await p.getByRole('heading', { name: 'Permission denied' }).waitFor();
    await p.getByText('user-b', { exact: true }).first().waitFor();
    await accessible(p, 'denial');
    await shot(p, 'denied');
    await ctx.close();
  });

  it('switches to the dark theme, still accessible', async () => {
    await page.goto(`${plane.api.httpUrl}/applications/argocd/guestbook`);
    await page
      .getByRole('region', { name: 'resource tree' })
      .getByRole('button', { name: 'Deployment guestbook-ui' })
      .waitFor();
    await page.getByRole('button', { name: 'switch to dark theme' }).click();
    expect(await page.evaluate<string>('document.documentElement.dataset.theme')).toBe('dark');
    await accessible(page, 'application (dark)');
    await shot(page, 'application-dark');
  });

  it('logs out: the cookie is gone and the login page is back', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Username').waitFor();
    expect((await admin.cookies()).find((c) => c.name === 'capstan_session')).toBeUndefined();
  });
});
