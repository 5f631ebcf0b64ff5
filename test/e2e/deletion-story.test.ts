// Story (issue 13, "which Application owns an object" and "deletion that cleans up"): two
// Applications declare one shared ConfigMap; Argo CD's tracking id says whose it is, the second
// sync fails with FailOnSharedResource=true and warns without it; deleting the first with cascade
// deletes only what it owns, as its ServiceAccount, while the second stays Synced; cascade=false
// leaves everything in place; a deletion the ServiceAccount may not perform keeps the Application
// deleting with Argo's DeletionError and completes by itself, across a sync-service restart, once
// the right is granted. Every service is its own process, on real PostgreSQL, NATS, git and a real
// kube-apiserver whose audit log says who deleted what.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, RbacAuthorizationV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { effectiveUser, seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { capstan, type ApiProcess } from './api-harness.js';
import { addCluster, addRepo, loginAdmin } from './cli-setup.js';
import { startRepoAndApi, startSyncProcess, syncProcessEnv } from './control-plane.js';
import type { RepoProcess } from './repo-harness.js';
import type { ServiceProcess } from '../src/infra/index.js';
import { collectForegroundDeletions } from './garbage-collector.js';

const GIT_PASSWORD = `git-${randomBytes(8).toString('hex')}`;
const PROD = 'team-a-prod';
const STAGE = 'team-a-stage';
const SA = `system:serviceaccount:${PROD}:deployer`;
const STAGE_SA = `system:serviceaccount:${STAGE}:deployer`;
const TRACKING = 'argocd.argoproj.io/tracking-id';
const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  greeting: hello\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('deletion story: ownership by tracking id, cascade as the tenant ServiceAccount', () => {
  let cluster: KubeCluster;
  let core: CoreV1Api;
  let git: GitServer;
  let apps: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let dir: string;
  let repo: RepoProcess;
  let api: ApiProcess;
  let sync: ServiceProcess;
  let syncEnv: Record<string, string>;
  let config: string;
  const as = (args: string[], input?: string) => capstan(config, [...args, '--context', 'admin'], input);
  const ok = async (args: string[], input?: string) => {
    const r = await as(args, input);
    expect(r, `${args.join(' ')}: ${r.stderr}\n${sync.output().slice(-2000)}`).toMatchObject({ code: 0 });
    return r.stdout;
  };
  const live = async (namespace: string, name: string): Promise<V1ConfigMap | undefined> =>
    core.readNamespacedConfigMap({ namespace, name }).catch((err: { code?: number }) => {
      if (err.code === 404) return undefined;
      throw err;
    });
  const getApp = async (name: string) => {
    const r = await as(['app', 'get', name, '-o', 'json']);
    if (r.code !== 0 && r.stderr.includes('NOT_FOUND')) return undefined;
    expect(r, r.stderr).toMatchObject({ code: 0 });
    return JSON.parse(r.stdout) as {
      metadata: { deletionTimestamp?: string; finalizers?: string[] };
      status: { sync: { status: string }; conditions?: { type: string; message: string }[] };
    };
  };
  const waitUntilGone = async (app: string, namespace: string, timeoutMs = 90_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      await collectForegroundDeletions(core, namespace);
      if ((await getApp(app)) === undefined) return;
      await sleep(300);
    }
    throw new Error(
      `application ${app} was not removed within ${timeoutMs} ms\n${sync.output().slice(-3000)}`,
    );
  };

  beforeAll(async () => {
    cluster = await startCluster({ name: 'deletion', log: () => {} });
    core = cluster.adminKubeconfig.makeApiClient(CoreV1Api);
    await seedTenant(cluster.adminKubeconfig, {
      namespace: PROD,
      serviceAccounts: ['deployer'],
      rules: [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
        },
      ],
    });
    // Stage's deployer may write but not delete (granted later in the story).
    await seedTenant(cluster.adminKubeconfig, {
      namespace: STAGE,
      serviceAccounts: ['deployer'],
      rules: [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          verbs: ['get', 'list', 'watch', 'create', 'patch', 'update'],
        },
      ],
    });
    git = await startGitServer();
    apps = await git.createRepository('team-a/apps.git', {
      credentials: [{ username: 'git', password: GIT_PASSWORD }],
    });
    await apps.commit({
      'a/config.yaml': `${configMap('a-only')}---\n${configMap('shared')}`,
      'b/config.yaml': `${configMap('b-only')}---\n${configMap('shared')}`,
      'c/config.yaml': configMap('c-only'),
      'd/config.yaml': configMap('d-only'),
    });
    db = await createTestDatabase('capstan_deletion_story');
    bus = await createTestBus('deletionstory');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-deletion-story-'));
    config = path.join(dir, 'contexts');
    ({ repo, api } = await startRepoAndApi({ databaseUrl: db.url, bus, cacheDir: path.join(dir, 'cache') }));
    syncEnv = syncProcessEnv(db.url, bus, { api, repo });
    sync = await startSyncProcess(syncEnv);

    await loginAdmin(config, api);
    await addCluster(config, dir, cluster, 'deletion');
    await ok([
      'proj',
      'create',
      'team-a',
      '--src',
      `${git.baseUrl}/team-a/*`,
      '--dest',
      `${cluster.server},team-a-*`,
      '--dest-service-account',
      `${cluster.server},${PROD},deployer`,
      '--dest-service-account',
      `${cluster.server},${STAGE},deployer`,
    ]);
    await addRepo(config, { url: apps.url, project: 'team-a', username: 'git', password: GIT_PASSWORD });
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

  const appFile = async (name: string, namespace: string, syncOptions: string[] = []) => {
    const file = path.join(dir, `${name}.yaml`);
    await writeFile(
      file,
      `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: ${name}, namespace: argocd }
spec:
  project: team-a
  source: { repoURL: '${apps.url}', path: ${name}, targetRevision: main }
  destination: { name: deletion, namespace: ${namespace} }
${syncOptions.length > 0 ? `  syncPolicy: { syncOptions: [${syncOptions.join(', ')}] }\n` : ''}`,
    );
    return file;
  };
  const syncApp = async (name: string) => {
    const r = await as(['app', 'sync', name, '--timeout', '120', '-o', 'json']);
    return {
      code: r.code,
      op: JSON.parse(r.stdout || '{}') as {
        phase: string;
        message: string;
        resources: { status: string; message: string; name: string }[];
      },
    };
  };

  it('tracks every applied object by its Application; a second Application declaring one fails with FailOnSharedResource=true and warns without it', async () => {
    await ok(['app', 'create', '-f', await appFile('a', PROD)]);
    expect((await syncApp('a')).op).toMatchObject({ phase: 'Succeeded' });
    expect((await live(PROD, 'shared'))?.metadata?.annotations?.[TRACKING]).toBe(
      'a:/ConfigMap:team-a-prod/shared',
    );
    expect((await live(PROD, 'a-only'))?.metadata?.annotations?.[TRACKING]).toBe(
      'a:/ConfigMap:team-a-prod/a-only',
    );

    await ok(['app', 'create', '-f', await appFile('b', PROD, ['FailOnSharedResource=true'])]);
    const strict = await syncApp('b');
    expect(strict.code).not.toBe(0);
    expect(strict.op.phase).toBe('Denied');
    expect(strict.op.message).toBe('Shared resource found: ConfigMap/shared is part of applications b and a');
    expect(strict.op.resources).toContainEqual(
      expect.objectContaining({ name: 'shared', status: 'SharedResourceWarning' }),
    );
    // Nothing was written: the shared object is still a's, b's own object does not exist.
    expect((await live(PROD, 'shared'))?.metadata?.annotations?.[TRACKING]).toBe(
      'a:/ConfigMap:team-a-prod/shared',
    );
    expect(await live(PROD, 'b-only')).toBeUndefined();

    await ok(['app', 'create', '--upsert', '-f', await appFile('b', PROD)]);
    const warned = await syncApp('b');
    expect(warned.op).toMatchObject({ phase: 'Succeeded' });
    expect(warned.op.resources).toContainEqual(
      expect.objectContaining({
        name: 'shared',
        status: 'SharedResourceWarning',
        message: 'ConfigMap/shared is part of applications b and a',
      }),
    );
    // The last writer tracks it, as in Argo CD.
    expect((await live(PROD, 'shared'))?.metadata?.annotations?.[TRACKING]).toBe(
      'b:/ConfigMap:team-a-prod/shared',
    );
  }, 180_000);

  it("deletes with cascade only what the Application owns, as its ServiceAccount; the other Application's object stays and it stays Synced", async () => {
    const since = await cluster.audit.mark();
    const out = await ok(['app', 'delete', 'a', '--yes']);
    expect(out).toMatch(/application 'a' (is being deleted|deleted)/);
    await waitUntilGone('a', PROD);
    expect(await live(PROD, 'a-only')).toBeUndefined();
    expect((await live(PROD, 'shared'))?.metadata?.annotations?.[TRACKING]).toBe(
      'b:/ConfigMap:team-a-prod/shared',
    );
    expect(await live(PROD, 'b-only')).toBeDefined();
    // The reconciler's verdict (the sync service's, not inferred from b's last sync): b's objects
    // are all still live and as declared.
    const deadline = Date.now() + 60_000;
    let bStatus = (await getApp('b'))?.status.sync.status;
    while (bStatus !== 'Synced' && Date.now() < deadline) {
      await sleep(300);
      bStatus = (await getApp('b'))?.status.sync.status;
    }
    expect(bStatus).toBe('Synced');

    const deletes = (await cluster.audit.flush({ since })).filter(
      (e) => e.verb === 'delete' && e.objectRef?.resource === 'configmaps',
    );
    expect(deletes.map((e) => [e.objectRef?.name, effectiveUser(e), e.user.username])).toEqual([
      ['a-only', SA, cluster.controlPlaneUsername],
    ]);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const rows = await client.query<{ name: string; verb: string; identity: string; message: string }>(
        `select name, verb, identity, message from audit.resource_results
         where application = 'argocd/a' and verb = 'delete' order by id`,
      );
      expect(rows.rows).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'a-only', identity: SA }),
          expect.objectContaining({
            name: 'shared',
            identity: SA,
            message: 'ConfigMap team-a-prod/shared left in place: its tracking id names application b',
          }),
        ]),
      );
    } finally {
      await client.end();
    }
  }, 180_000);

  it('deletes with cascade=false at once and leaves the resources in place', async () => {
    await ok(['app', 'create', '-f', await appFile('c', PROD)]);
    expect((await syncApp('c')).op).toMatchObject({ phase: 'Succeeded' });
    expect(await ok(['app', 'delete', 'c', '--cascade=false', '--yes'])).toBe("application 'c' deleted\n");
    expect(await getApp('c')).toBeUndefined();
    await sleep(2_000);
    expect((await live(PROD, 'c-only'))?.metadata?.annotations?.[TRACKING]).toBe(
      'c:/ConfigMap:team-a-prod/c-only',
    );
  }, 120_000);

  it('keeps an Application whose ServiceAccount may not delete in deleting state with DeletionError, and completes across a restart once the right is granted', async () => {
    await ok(['app', 'create', '-f', await appFile('d', STAGE)]);
    expect((await syncApp('d')).op).toMatchObject({ phase: 'Succeeded' });
    const since = await cluster.audit.mark();
    expect(await ok(['app', 'delete', 'd', '--yes'])).toContain("application 'd' is being deleted");

    let app = await getApp('d');
    for (let i = 0; i < 100 && !app?.status.conditions?.length; i++) {
      await sleep(300);
      app = await getApp('d');
    }
    expect(app?.metadata).toMatchObject({
      deletionTimestamp: expect.any(String),
      finalizers: ['resources-finalizer.argocd.argoproj.io'],
    });
    expect(app?.status.conditions).toEqual([
      expect.objectContaining({
        type: 'DeletionError',
        message: expect.stringContaining(`${STAGE_SA} may not delete ConfigMap team-a-stage/d-only`),
      }),
    ]);
    const shown = await ok(['app', 'get', 'd']);
    expect(shown).toMatch(/Deleting since/);
    expect(shown).toMatch(/DeletionError: system:serviceaccount:team-a-stage:deployer may not delete/);
    // Syncs wait for the deletion.
    const refused = await as(['app', 'sync', 'd']);
    expect(refused.stderr).toContain('FAILED_PRECONDITION: application argocd/d is being deleted');

    // The deletion is durable state: the sync service goes away, the right is granted meanwhile,
    // and a new sync service finishes the deletion without anyone asking again.
    await sync.stop();
    const rbac = cluster.adminKubeconfig.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: STAGE,
      body: {
        metadata: { name: 'deployer-delete' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['delete'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: STAGE,
      body: {
        metadata: { name: 'deployer-delete' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer-delete' },
        subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: STAGE }],
      },
    });
    sync = await startSyncProcess(syncEnv);
    await waitUntilGone('d', STAGE);
    expect(await live(STAGE, 'd-only')).toBeUndefined();

    const deletes = (await cluster.audit.flush({ since })).filter(
      (e) => e.verb === 'delete' && e.objectRef?.resource === 'configmaps',
    );
    expect(deletes.length).toBeGreaterThanOrEqual(2);
    // Refused first, allowed after the grant: always as the ServiceAccount, never the control plane.
    expect(new Set(deletes.map(effectiveUser))).toEqual(new Set([STAGE_SA]));
    expect(deletes.map((e) => e.responseStatus?.code)).toContain(403);
  }, 240_000);
});
