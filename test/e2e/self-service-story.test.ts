// Story (issue 12, proposal 001): self-service AppProjects through GitOps on the real stack. An admin
// creates the parent projects dev-namespaces-only and no-cluster-resources and the Application
// self-service-projects (allowedParentProjects: both); developers push AppProjects and Applications
// to its repository. A bounded project becomes a Capstan project, and its developer's Application
// syncs as its ServiceAccount; a project under another parent, or wider than its parent, fails the
// admin Application's sync and changes nothing; the parent bounds the child at use; delivered
// Applications (app-of-apps) sync as their own projects' ServiceAccounts and are pruned when removed
// from git; nobody else takes a delivered object over. Every service is its own process (api, repo,
// sync --enable-impersonation) on real PostgreSQL, NATS, a git server and an API server whose audit
// log says who wrote what.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { effectiveUser, seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { capstan, type ApiProcess } from './api-harness.js';
import { eventually, ok } from './appset-story-fixtures.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { collectForegroundDeletions } from './garbage-collector.js';
import {
  addonSet,
  adminManifests,
  clusterRole,
  configMap,
  devApplication,
  devProject,
} from './self-service-fixtures.js';

interface SyncOperation {
  phase: string;
  message: string;
  identity: string;
  resources: { kind: string; name: string; status: string; message: string; identity: string }[];
}

describe('self-service story: AppProjects and Applications delivered from git, bounded by their parents', () => {
  let cluster: KubeCluster;
  let git: GitServer;
  let projectsRepo: TestRepository;
  let appsRepo: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let dir: string;
  let api: ApiProcess;
  let plane: ControlPlane;
  let config: string;
  const as = (ctx: string, args: string[], input?: string) =>
    capstan(config, ['--context', ctx, ...args], input);
  const file = async (name: string, content: string) => {
    const p = path.join(dir, name);
    await writeFile(p, content);
    return p;
  };
  const services = () => plane?.output() ?? '';
  /** A sync to completion as `ctx`: the operation, whatever its phase. */
  const syncApp = async (ctx: string, name: string, extra: string[] = []) => {
    const r = await as(ctx, ['app', 'sync', name, '--timeout', '120', '-o', 'json', ...extra]);
    if (!r.stdout.trim().startsWith('{')) throw new Error(`app sync ${name}: ${r.stderr}\n${services()}`);
    return JSON.parse(r.stdout) as SyncOperation;
  };
  const project = async (name: string) => {
    const r = await as('admin', ['proj', 'get', name, '-o', 'json']);
    return r.code === 0
      ? (JSON.parse(r.stdout) as { metadata: { annotations?: Record<string, string> } })
      : undefined;
  };
  const dev = (name: string, namespace: string, group: string, parent = 'dev-namespaces-only') =>
    devProject({ name, parent, server: cluster.server, namespace, appsRepo: appsRepo.url, group });

  beforeAll(async () => {
    cluster = await startCluster({ name: 'self-service', log: () => {} });
    for (const namespace of ['dev-team-x', 'dev-team-z'])
      await seedTenant(cluster.adminKubeconfig, {
        namespace,
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
    projectsRepo = await git.createRepository('platform/projects.git');
    appsRepo = await git.createRepository('dev/apps.git');
    await appsRepo.commit({
      'guestbook/config.yaml': configMap('guestbook-x'),
      'z1/config.yaml': configMap('z1'),
      'x1/config.yaml': configMap('x1'),
      'x2/config.yaml': configMap('x2'),
      'cluster-wide/role.yaml': clusterRole('team-x-reader'),
    });
    await projectsRepo.commit({ 'README.md': 'AppProjects of the developers\n' });
    db = await createTestDatabase('capstan_self_service');
    bus = await createTestBus('selfservice');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-self-service-'));
    config = path.join(dir, 'contexts');
    // Every sync reads the branch afresh: a push is seen at once (no push events from the test server).
    plane = await startControlPlane({
      databaseUrl: db.url,
      bus,
      cacheDir: path.join(dir, 'cache'),
      repoEnv: { CAPSTAN_REVISION_CACHE_TTL_MS: '0' },
    });
    ({ api } = plane);
    const login = (user: string, password: string) =>
      capstan(
        config,
        ['login', api.grpcAddress, '--username', user, '--password-stdin', '--name', user],
        `${password}\n`,
      );
    ok(await login('admin', api.adminPassword), 'admin login');
    const tokenFile = await file('token', `${cluster.controlPlaneToken}\n`);
    const caFile = await file('ca.pem', cluster.caPem);
    ok(
      await as('admin', [
        'cluster',
        'add',
        cluster.server,
        '--name',
        'story',
        '--bearer-token-file',
        tokenFile,
        '--ca-file',
        caFile,
      ]),
      'cluster add',
    );
    const admin = await file(
      'admin.yaml',
      adminManifests({ server: cluster.server, projectsRepo: projectsRepo.url }),
    );
    ok(await as('admin', ['apply', '-f', admin]), `apply admin manifests: ${services()}`);
    for (const [user, group] of [
      ['dev-x', 'team-x-devs'],
      ['dev-z', 'team-z-devs'],
    ] as const) {
      ok(
        await as('admin', ['account', 'create', user, '--groups', group, '--password-stdin'], `${user}-pw\n`),
        `account create ${user}`,
      );
      ok(await login(user, `${user}-pw`), `login ${user}`);
    }
  }, 300_000);

  afterAll(async () => {
    await plane?.stop();
    await git?.close();
    await bus?.cleanup();
    await db?.drop();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('delivers a bounded AppProject, and its developer syncs as its ServiceAccount', async () => {
    await projectsRepo.commit({ 'projects/team-x.yaml': dev('team-x', 'dev-team-x', 'team-x-devs') });
    const op = await syncApp('admin', 'self-service-projects');
    expect(op, services()).toMatchObject({ phase: 'Succeeded' });
    expect(op.resources).toEqual([
      // Written by the api as the delivering Application, not by the sync's ServiceAccount.
      expect.objectContaining({
        kind: 'AppProject',
        name: 'team-x',
        status: 'Synced',
        identity: 'application:argocd/self-service-projects',
      }),
    ]);
    const delivered = await project('team-x');
    expect(delivered?.metadata.annotations?.['argocd.argoproj.io/tracking-id']).toBe(
      'self-service-projects:argoproj.io/AppProject:argocd/team-x',
    );
    // The delivered project's role lets its developers manage their Applications, nothing more.
    const app = await file(
      'guestbook-x.yaml',
      devApplication({
        name: 'guestbook-x',
        project: 'team-x',
        server: cluster.server,
        namespace: 'dev-team-x',
        appsRepo: appsRepo.url,
        path: 'guestbook',
      }),
    );
    ok(await as('dev-x', ['app', 'create', '-f', app]), 'dev-x creates guestbook-x');
    expect((await as('dev-z', ['app', 'get', 'guestbook-x'])).code).not.toBe(0);
    const since = await cluster.audit.mark();
    const synced = await syncApp('dev-x', 'guestbook-x');
    expect(synced, services()).toMatchObject({
      phase: 'Succeeded',
      identity: 'system:serviceaccount:dev-team-x:deployer',
    });
    const writes = (await cluster.audit.flush({ since })).filter(
      (e) => e.objectRef?.resource === 'configmaps' && e.verb !== 'get',
    );
    expect(writes.length).toBeGreaterThan(0);
    expect(new Set(writes.map(effectiveUser))).toEqual(
      new Set(['system:serviceaccount:dev-team-x:deployer']),
    );
  });

  it('fails the sync and changes nothing when a project names a parent outside allowedParentProjects', async () => {
    const before = await project('team-x');
    await projectsRepo.commit({
      'projects/rogue.yaml': dev('rogue', 'dev-rogue', 'rogue-devs', 'platform'),
      'projects/team-x.yaml': dev('team-x', 'dev-team-x', 'team-x-devs').replace(
        'roles:',
        'roles: # edited\n',
      ),
    });
    try {
      // Refused by the sync's decision, before anything is written.
      const op = await syncApp('admin', 'self-service-projects');
      expect(op.phase).toBe('Denied');
      expect(op.message).toContain(
        'AppProject "rogue": spec.parentProject "platform" is not one of the allowedParentProjects ["dev-namespaces-only","no-cluster-resources"]',
      );
      expect(await project('rogue')).toBeUndefined();
      expect(await project('team-x')).toEqual(before);
    } finally {
      await projectsRepo.commit({ 'projects/rogue.yaml': null });
    }
  });

  it('refuses at sync a child that lists a destination its parent never allows', async () => {
    await projectsRepo.commit({ 'projects/wide.yaml': dev('wide', 'prod-wide', 'wide-devs') });
    try {
      const op = await syncApp('admin', 'self-service-projects');
      expect(op.phase).toBe('Denied');
      expect(op.message).toContain('wide');
      expect(op.message).toContain('dev-namespaces-only');
      expect(await project('wide')).toBeUndefined();
    } finally {
      await projectsRepo.commit({ 'projects/wide.yaml': null });
    }
  });

  it("bounds the child's Applications by the parent at use: no ClusterRole once the parent allows none", async () => {
    await projectsRepo.commit({
      'projects/team-x.yaml': devProject({
        name: 'team-x',
        parent: 'dev-namespaces-only',
        server: cluster.server,
        namespace: 'dev-team-x',
        appsRepo: appsRepo.url,
        group: 'team-x-devs',
        clusterRoles: true,
      }),
    });
    expect(await syncApp('admin', 'self-service-projects')).toMatchObject({ phase: 'Succeeded' });
    // The admin narrows the parent after the fact: the child still allows ClusterRoles.
    const narrowed = adminManifests({ server: cluster.server, projectsRepo: projectsRepo.url })
      .split('---')[0]!
      .replace(/clusterResourceWhitelist: \[.*\]/, 'clusterResourceWhitelist: []');
    ok(await as('admin', ['apply', '-f', await file('narrowed.yaml', narrowed)]), 'narrow the parent');
    const app = devApplication({
      name: 'cluster-wide',
      project: 'team-x',
      server: cluster.server,
      namespace: 'dev-team-x',
      appsRepo: appsRepo.url,
      path: 'cluster-wide',
    });
    ok(
      await as('dev-x', ['app', 'create', '-f', await file('cluster-wide.yaml', app)]),
      'create cluster-wide',
    );
    const op = await syncApp('dev-x', 'cluster-wide');
    expect(op.phase).toBe('Denied');
    expect(op.message).toContain('ClusterRole');
    expect(op.message).toContain('dev-namespaces-only');
    ok(await as('dev-x', ['app', 'delete', 'cluster-wide', '--yes']), 'delete cluster-wide');
  });

  it('delivers Applications that sync as their own projects’ ServiceAccounts, and prunes one removed from git', async () => {
    const application = (name: string, project: string, namespace: string) =>
      devApplication({
        name,
        project,
        server: cluster.server,
        namespace,
        appsRepo: appsRepo.url,
        path: name,
      });
    await projectsRepo.commit({
      'projects/team-z.yaml': dev('team-z', 'dev-team-z', 'team-z-devs', 'no-cluster-resources'),
      'apps/x1.yaml': application('x1', 'team-x', 'dev-team-x'),
      'apps/x2.yaml': application('x2', 'team-x', 'dev-team-x'),
      'apps/z1.yaml': application('z1', 'team-z', 'dev-team-z'),
    });
    const op = await syncApp('admin', 'self-service-projects');
    expect(op, services()).toMatchObject({ phase: 'Succeeded' });
    expect(op.resources.map((r) => `${r.kind}/${r.name}:${r.status}`).sort()).toEqual([
      'AppProject/team-x:Synced',
      'AppProject/team-z:Synced',
      'Application/x1:Synced',
      'Application/x2:Synced',
      'Application/z1:Synced',
    ]);
    for (const [name, sa] of [
      ['x1', 'system:serviceaccount:dev-team-x:deployer'],
      ['x2', 'system:serviceaccount:dev-team-x:deployer'],
      ['z1', 'system:serviceaccount:dev-team-z:deployer'],
    ] as const)
      expect(await syncApp('admin', name), name).toMatchObject({ phase: 'Succeeded', identity: sa });
    // dev-z manages z1 through the delivered project's role; dev-x cannot see it.
    ok(await as('dev-z', ['app', 'get', 'z1']), 'dev-z gets z1');
    expect((await as('dev-x', ['app', 'get', 'z1'])).code).not.toBe(0);

    await projectsRepo.commit({ 'apps/x2.yaml': null });
    const pruned = await syncApp('admin', 'self-service-projects', ['--prune']);
    expect(pruned, services()).toMatchObject({ phase: 'Succeeded' });
    expect(pruned.resources).toContainEqual(
      expect.objectContaining({ kind: 'Application', name: 'x2', status: 'Pruned' }),
    );
    const names = (await as('admin', ['app', 'list', '-o', 'name'])).stdout.split('\n').filter(Boolean);
    expect(names.sort()).toEqual(['guestbook-x', 'self-service-projects', 'x1', 'z1']);
  });

  it('delivers an ApplicationSet whose Applications land only in projects the Application may deliver into', async () => {
    const set = (project: string) =>
      addonSet({
        name: 'addons',
        project,
        server: cluster.server,
        namespace: 'dev-team-x',
        appsRepo: appsRepo.url,
      });
    await projectsRepo.commit({ 'sets/addons.yaml': set('team-x') });
    const op = await syncApp('admin', 'self-service-projects');
    expect(op, services()).toMatchObject({ phase: 'Succeeded' });
    expect(op.resources).toContainEqual(
      expect.objectContaining({ kind: 'ApplicationSet', name: 'addons', status: 'Synced' }),
    );
    const generated = await as('admin', ['app', 'list', '-l', 'capstan.test/set=addons', '-o', 'name']);
    expect(generated.stdout.split('\n').filter(Boolean).sort()).toEqual(['addon-a', 'addon-b']);
    // The set is the delivering Application's: a user cannot change or delete it.
    const del = await as('admin', ['appset', 'delete', 'addons', '--yes']);
    expect(del.code).not.toBe(0);
    expect(del.stderr).toContain(
      'ApplicationSet addons is managed by Application argocd/self-service-projects',
    );

    // Moved into a project neither under platform nor delivered by it: refused, nothing changes.
    await projectsRepo.commit({ 'sets/addons.yaml': set('no-cluster-resources') });
    const refused = await syncApp('admin', 'self-service-projects');
    expect(refused.phase, services()).toBe('Failed');
    expect(refused.message).toContain('ApplicationSet argocd/addons');
    expect(refused.message).toContain('may not deliver into project no-cluster-resources');
    const kept = await as('admin', ['app', 'get', 'addon-a', '-o', 'json']);
    expect(JSON.parse(kept.stdout)).toMatchObject({ spec: { project: 'team-x' } });

    // Removed from git: pruned with its Applications.
    await projectsRepo.commit({ 'sets/addons.yaml': null });
    const pruned = await syncApp('admin', 'self-service-projects', ['--prune']);
    expect(pruned, services()).toMatchObject({ phase: 'Succeeded' });
    expect(pruned.resources).toContainEqual(
      expect.objectContaining({ kind: 'ApplicationSet', name: 'addons', status: 'Pruned' }),
    );
    const left = await as('admin', ['app', 'list', '-l', 'capstan.test/set=addons', '-o', 'name']);
    expect(left.stdout.trim()).toBe('');
  });

  it('lets nobody else take a delivered object over, and audits every delivery decision', async () => {
    const refused = await as('dev-x', ['app', 'delete', 'x1', '--yes']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'Application x1 is managed by Application argocd/self-service-projects (delivered from git)',
    );
    const edit = await as('admin', [
      'apply',
      '-f',
      await file('team-z.yaml', dev('team-z', 'dev-team-z', 'team-z-devs', 'no-cluster-resources')),
    ]);
    expect(edit.code).not.toBe(0);
    expect(edit.stderr).toContain('AppProject team-z is managed by Application argocd/self-service-projects');
    // A second admin Application that delivers the same project is refused: no take-over.
    const other = adminManifests({ server: cluster.server, projectsRepo: projectsRepo.url })
      .split('---')[3]!
      .replace('name: self-service-projects', 'name: other-delivery');
    ok(await as('admin', ['apply', '-f', await file('other.yaml', other)]), 'create other-delivery');
    const op = await syncApp('admin', 'other-delivery');
    expect(op.phase).toBe('Failed');
    expect(op.message).toContain('AppProject team-x is managed by Application argocd/self-service-projects');

    const decisions = async (subject: string) => {
      const r = await as('admin', [
        'audit',
        'query',
        'access',
        '--user',
        subject,
        '--limit',
        '500',
        '-o',
        'json',
      ]);
      ok(r, 'audit query access');
      return (JSON.parse(r.stdout) as { fields: { object: string; decision: string } }[]).map(
        (x) => `${x.fields.decision}:${x.fields.object}`,
      );
    };
    expect(await decisions('application:argocd/self-service-projects')).toEqual(
      expect.arrayContaining(['allow:team-x', 'allow:team-x/x2']),
    );
    // A project refused by allowedParentProjects never reaches the api: the sync's decision is the row.
    const denied = await as('admin', [
      'audit',
      'query',
      'sync',
      '--app',
      'self-service-projects',
      '--outcome',
      'deny',
      '-o',
      'json',
    ]);
    ok(denied, 'audit query sync');
    expect(
      (JSON.parse(denied.stdout) as { fields: { reason: string } }[]).map((r) => r.fields.reason),
    ).toContainEqual(expect.stringContaining('AppProject "rogue": spec.parentProject "platform"'));
    expect(await decisions('application:argocd/other-delivery')).toContain('deny:team-x');
  });

  it('deletes what the Application delivered when it is deleted with cascade', async () => {
    for (const app of ['guestbook-x'])
      ok(await as('dev-x', ['app', 'delete', app, '--yes']), `delete ${app}`);
    ok(await as('admin', ['app', 'delete', 'other-delivery', '--yes']), 'delete other-delivery');
    ok(await as('admin', ['app', 'delete', 'self-service-projects', '--cascade', '--yes']), 'cascade delete');
    const core = cluster.adminKubeconfig.makeApiClient(CoreV1Api);
    await eventually('the delivered objects to be deleted', async () => {
      // Cascades delete in the foreground; this cluster has no garbage collector to finish them.
      for (const namespace of ['dev-team-x', 'dev-team-z']) await collectForegroundDeletions(core, namespace);
      const apps = (await as('admin', ['app', 'list', '-o', 'name'])).stdout.split('\n').filter(Boolean);
      const left = [
        ...apps,
        ...((await project('team-x')) ? ['team-x'] : []),
        ...((await project('team-z')) ? ['team-z'] : []),
      ];
      return left.length === 0 ? true : undefined;
    });
    // The parents the admin made are not the Application's: they stay.
    expect(await project('dev-namespaces-only')).toBeDefined();
  });
});
