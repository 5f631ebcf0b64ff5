// Story: `capstan app diff` tells the truth about drift, like `argocd app diff`, and never through
// anyone's identity but the Application's ServiceAccount. The whole control plane runs as processes
// (startControlPlane) on real PostgreSQL, NATS, a real git server and a real kube-apiserver. The
// tenant's Application is synced as its ServiceAccount; an administrator then edits objects the
// way kubectl does (JSON patches with their own field managers), and the diff shows exactly what
// git would change back: an image, not a replica count an HPA owns (ignoreDifferences), a Secret's
// value only masked. Another tenant cannot diff the Application: denied and audited.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppsV1Api, CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { effectiveUser, seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { capstan, type CliResult } from './api-harness.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';

const GIT_PASSWORD = `git-${randomBytes(8).toString('hex')}`;
const NS = 'team-a-prod';
const SECRET_VALUE = `s3cr3t-${randomBytes(6).toString('hex')}`;
const EDITED_VALUE = `edited-${randomBytes(6).toString('hex')}`;

const manifests = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: nginx:1.25
          ports: [{ containerPort: 80 }]
          resources:
            limits: { cpu: '0.5', memory: 128Mi }
---
apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: ${SECRET_VALUE}
`;

describe('diff story: capstan app diff shows drift as the tenant ServiceAccount sees it', () => {
  let cluster: KubeCluster;
  let git: GitServer;
  let apps: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let dir: string;
  let plane: ControlPlane;
  let config: string;
  const as = (user: string, args: string[], input?: string) =>
    capstan(config, [...args, '--context', user], input);
  const ok = (r: CliResult, what: string) =>
    expect(r, `${what}: ${r.stderr}\n${plane?.output() ?? ''}`).toMatchObject({ code: 0 });
  const file = async (name: string, content: string) => {
    const p = path.join(dir, name);
    await writeFile(p, content, { mode: 0o600 });
    return p;
  };
  const diff = () => as('admin', ['app', 'diff', 'guestbook']);
  const sync = async () => {
    const r = await as('admin', ['app', 'sync', 'guestbook', '--timeout', '120', '-o', 'json']);
    ok(r, 'app sync');
    expect(JSON.parse(r.stdout)).toMatchObject({ phase: 'Succeeded' });
  };
  // The administrator's kubectl-style edits: JSON patches under a field manager of their own.
  const patchDeployment = (ops: object[], fieldManager: string) =>
    cluster.adminKubeconfig
      .makeApiClient(AppsV1Api)
      .patchNamespacedDeployment({ name: 'web', namespace: NS, body: ops, fieldManager });

  beforeAll(async () => {
    cluster = await startCluster({ name: 'diff', log: () => {} });
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
          resources: ['secrets'],
          verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
        },
      ],
    });
    git = await startGitServer();
    apps = await git.createRepository('team-a/apps.git', {
      credentials: [{ username: 'git', password: GIT_PASSWORD }],
    });
    await apps.commit({ 'guestbook/all.yaml': manifests });
    db = await createTestDatabase('capstan_diff_story');
    bus = await createTestBus('diffstory');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-diff-story-'));
    config = path.join(dir, 'contexts');
    plane = await startControlPlane({ databaseUrl: db.url, bus, cacheDir: path.join(dir, 'cache') });
    const { api } = plane;
    const login = (user: string, password: string) =>
      capstan(
        config,
        ['login', api.grpcAddress, '--username', user, '--password-stdin', '--name', user],
        `${password}\n`,
      );
    ok(await login('admin', api.adminPassword), 'admin login');
    const steps: [string[], string?][] = [
      [
        [
          'cluster',
          'add',
          cluster.server,
          '--name',
          'diff',
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
      // Tenant B: an administrator of its own project only.
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
    ok(await login('user-b', 'team-b-password'), 'user-b login');
    // ignoreDifferences is not in the CLI's flags (nor Argo's): the Application comes as a manifest.
    const application = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: guestbook, namespace: argocd }
spec:
  project: team-a
  source: { repoURL: '${apps.url}', targetRevision: main, path: guestbook }
  destination: { name: diff, namespace: ${NS} }
  ignoreDifferences:
    - { group: apps, kind: Deployment, jsonPointers: [/spec/replicas] }
`;
    ok(await as('admin', ['apply', '-f', await file('app.yaml', application)]), 'apply Application');
    await sync();
  }, 300_000);

  afterAll(async () => {
    await plane?.stop();
    await git?.close();
    await bus?.cleanup();
    await db?.drop();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('shows no difference right after a sync (exit 0), defaults and canonical quantities included', async () => {
    const r = await diff();
    expect(r, `${r.stderr}\n${plane.output()}`).toMatchObject({ code: 0, stdout: '' });
  });

  it('shows a hand-edited image as argocd app diff does (exit 1), and nothing else', async () => {
    await patchDeployment(
      [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'nginx:1.26' }],
      'kubectl-edit',
    );
    const r = await diff();
    expect(r, r.stderr).toMatchObject({ code: 1 });
    expect(r.stdout).toContain(`===== apps/Deployment ${NS}/web ======`);
    expect(r.stdout).toMatch(/^-\s+(- )?image: nginx:1\.26$/m);
    expect(r.stdout).toMatch(/^\+\s+(- )?image: nginx:1\.25$/m);
    expect(r.stdout.split('\n').filter((l) => /^[-+]\s/.test(l))).toHaveLength(2);
    expect(r.stdout).not.toContain('/Secret');
    // --exit-code=false: the same diff, exit 0.
    const quiet = await as('admin', ['app', 'diff', 'guestbook', '--exit-code=false']);
    expect(quiet).toMatchObject({ code: 0, stdout: r.stdout });
    await sync();
    expect(await diff()).toMatchObject({ code: 0, stdout: '' });
  });

  it('does not show replicas that an HPA-like manager changes, under ignoreDifferences /spec/replicas', async () => {
    await patchDeployment([{ op: 'replace', path: '/spec/replicas', value: 5 }], 'kube-controller-manager');
    const live = await cluster.adminKubeconfig
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: 'web', namespace: NS });
    expect(live.spec?.replicas).toBe(5);
    const r = await diff();
    expect(r, r.stderr).toMatchObject({ code: 0, stdout: '' });
  });

  it('shows a changed Secret value masked, never the values', async () => {
    await cluster.adminKubeconfig.makeApiClient(CoreV1Api).patchNamespacedSecret({
      name: 'db',
      namespace: NS,
      body: [{ op: 'replace', path: '/data/password', value: Buffer.from(EDITED_VALUE).toString('base64') }],
      fieldManager: 'kubectl-edit',
    });
    const r = await diff();
    expect(r, r.stderr).toMatchObject({ code: 1 });
    expect(r.stdout).toContain(`===== /Secret ${NS}/db ======`);
    expect(r.stdout).toMatch(/^-\s+password: \++$/m);
    expect(r.stdout).toMatch(/^\+\s+password: \++$/m);
    // Argo CD's HTTP endpoint gives the same items; no state in it carries a value either.
    const token = /name: admin[\s\S]*?token: (\S+)/.exec(await readFile(config, 'utf8'))?.[1];
    const res = await fetch(
      `${plane.api.httpUrl}/api/v1/applications/guestbook/managed-resources?appNamespace=argocd`,
      {
        headers: { authorization: `Bearer ${token}` },
      },
    );
    expect(res.status).toBe(200);
    const body = await res.text();
    const items = (JSON.parse(body) as { items: { kind: string; name: string; modified?: boolean }[] }).items;
    expect(items.map((i) => `${i.kind}/${i.name}:${i.modified === true}`).sort()).toEqual([
      'Deployment/web:false',
      'Secret/db:true',
    ]);
    for (const value of [SECRET_VALUE, EDITED_VALUE]) {
      for (const shown of [r.stdout, body]) {
        expect(shown).not.toContain(value);
        expect(shown).not.toContain(Buffer.from(value).toString('base64'));
      }
    }
  });

  it('reports a read the ServiceAccount may not do as an error (exit 2), never reading as the control plane', async () => {
    // The platform team takes Secrets away from the tenant's Role.
    const rbac = cluster.adminKubeconfig.makeApiClient(RbacAuthorizationV1Api);
    const role = await rbac.readNamespacedRole({ name: 'capstan-tenant', namespace: NS });
    role.rules = (role.rules ?? []).filter((r) => !r.resources?.includes('secrets'));
    await rbac.replaceNamespacedRole({ name: 'capstan-tenant', namespace: NS, body: role });
    const since = await cluster.audit.mark();
    const r = await diff();
    expect(r).toMatchObject({ code: 2 });
    expect(r.stderr).toContain(`/Secret ${NS}/db: system:serviceaccount:${NS}:deployer may not read it`);
    // Every read of the Secret was made as the ServiceAccount (impersonated), none as Capstan itself.
    const reads = (await cluster.audit.flush({ since })).filter(
      (e) => e.objectRef?.resource === 'secrets' && e.objectRef?.name === 'db' && e.verb === 'get',
    );
    expect(reads.length).toBeGreaterThan(0);
    expect(new Set(reads.map(effectiveUser))).toEqual(new Set([`system:serviceaccount:${NS}:deployer`]));
  });

  it("refuses another tenant's diff (PERMISSION_DENIED, exit 2), and the refusal is audited", async () => {
    const r = await as('user-b', ['app', 'diff', 'guestbook']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('PERMISSION_DENIED');
    const denies = JSON.parse(
      (await as('admin', ['audit', 'query', 'access', '--user', 'user-b', '--outcome', 'deny', '-o', 'json']))
        .stdout,
    ) as { fields: Record<string, string> }[];
    expect(denies.map((d) => `${d.fields.action} ${d.fields.object}`)).toContain('get team-a/guestbook');
  });
});
