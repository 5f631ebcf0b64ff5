// The sync service on real infrastructure — PostgreSQL, NATS JetStream and two real kube-apiservers
// — carrying syncs through: prune, hooks, dry runs, duplicate delivery, bad input, unreachable and
// silent clusters, automated syncs, cascade deletion and health-driven waves, always as the resolved
// ServiceAccount.
import { AppsV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { connectBus, newEvent, repositoryRevisionChanged, syncRequest } from '@capstan/events';
import { createServer, type Socket } from 'node:net';
import { effectiveUser, ensureRole, ensureRoleBinding, type KubeCluster } from '@capstan/test/kube';
import { startSyncHarness, waitUntil, type SyncHarness } from './test-support/harness.js';
import {
  application,
  cm,
  configMapsIn,
  head,
  rendered,
  startTestClusters,
  teamAProject,
} from './test-support/fixtures.js';

let a: KubeCluster;
let b: KubeCluster;
let stopClusters: () => Promise<void>;

beforeAll(async () => {
  ({ a, b, stop: stopClusters } = await startTestClusters());
}, 240_000);

afterAll(async () => stopClusters?.());

describe('sync with impersonation on', () => {
  let h: SyncHarness;

  beforeAll(async () => {
    h = await startSyncHarness([a, b], { impersonation: true, manifests: rendered });
    await h.registerCluster(a, 'a');
    await h.registerCluster(b, 'remote');
    await h.putProject(teamAProject(a));
    // The Application most tests work on, synced once with two ConfigMaps.
    await h.putApplication(application('guestbook', 'team-a', { server: a.server, namespace: 'team-a' }));
    const first = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { objects: [cm('one'), cm('two')] },
    );
    if ((await h.waitForTerminal(first)).status !== 'succeeded')
      throw new Error('the first sync of guestbook failed');
  }, 120_000);

  afterAll(async () => h?.stop());

  it('given a second sync without an object and prune, when synced, then the stale object is deleted as the ServiceAccount', async () => {
    const since = await a.audit.mark();
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { objects: [cm('one')], prune: true },
    );
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(a, 'team-a')).toEqual(['one']);
    const audit = await a.audit.flush({ since });
    const deletes = audit.filter((e) => e.verb === 'delete' && e.objectRef?.name === 'two');
    expect(deletes.map((e) => [effectiveUser(e), e.responseStatus?.code])).toEqual([
      ['system:serviceaccount:team-a:deployer', 200],
    ]);
  });

  it('given hooks, when synced, then PreSync runs first and HookSucceeded deletes it, all as the ServiceAccount', async () => {
    const since = await a.audit.mark();
    const hook = cm('pre-hook', {
      annotations: {
        'argocd.argoproj.io/hook': 'PreSync',
        'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded',
      },
    });
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { objects: [cm('one'), hook] },
    );
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    const audit = (await a.audit.flush({ since })).filter(
      (e) => e.objectRef?.resource === 'configmaps' && (e.verb === 'patch' || e.verb === 'delete'),
    );
    expect(audit.map((e) => [e.verb, e.objectRef?.name, effectiveUser(e)])).toEqual([
      ['patch', 'pre-hook', 'system:serviceaccount:team-a:deployer'],
      ['delete', 'pre-hook', 'system:serviceaccount:team-a:deployer'],
      ['patch', 'one', 'system:serviceaccount:team-a:deployer'],
    ]);
    expect(await configMapsIn(a, 'team-a')).toEqual(['one']);
  });

  it('given the same request delivered twice, when synced, then there is one operation and exactly one terminal event', async () => {
    const op = await h.requestSync({ namespace: 'argocd', name: 'guestbook' }, { objects: [cm('one')] });
    await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { operationId: op, objects: [cm('one')] },
    );
    await h.waitForTerminal(op);
    await new Promise((r) => setTimeout(r, 1_500));
    const terminals = (await h.eventsOf(op)).filter(
      (e) => e.type.endsWith('succeeded.v1') || e.type.endsWith('failed.v1'),
    );
    expect(terminals).toHaveLength(1);
  });

  it('given bad input, when synced, then each fails with a precise reason in the terminal event and the audit row, and the service keeps serving', async () => {
    await h.putApplication(
      application('orphan', 'missing-project', { server: a.server, namespace: 'team-a' }),
    );
    const missing = await h.requestSync({ namespace: 'argocd', name: 'orphan' }, { objects: [cm('x')] });
    const unknownKind = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { objects: [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }] },
    );
    const duplicate = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { objects: [cm('dup'), cm('dup')] },
    );
    const badWave = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { objects: [cm('w', { annotations: { 'argocd.argoproj.io/sync-wave': 'soon' } })] },
    );
    // Objects inline in the command (as an anonymous client once did) are refused by the schema:
    // by the publisher's check, and by the sync service if someone publishes around that check.
    const smuggled = newEvent(
      syncRequest.type,
      {
        operationId: 'smuggled',
        application: { namespace: 'argocd', name: 'guestbook' },
        dryRun: false,
        prune: false,
        manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 's' }, data: {} }],
      } as never,
      { subject: 'applications/argocd/guestbook', actor: 'user:admin', source: 'capstan/api' },
    );
    await expect(h.bus.publish(smuggled)).rejects.toThrow(/manifests/);
    await h.bus.publishEncoded(h.bus.subjectOf(syncRequest.type), smuggled.id, JSON.stringify(smuggled));
    expect((await h.waitForTerminal(missing)).reason).toBe('project "missing-project" not found');
    expect((await h.waitForTerminal(unknownKind)).reason).toContain(
      'kind Widget of example.com/v1 is not served by cluster a',
    );
    expect((await h.waitForTerminal(duplicate)).reason).toBe(
      'invalid manifests: ConfigMap team-a/dup: duplicate object',
    );
    expect((await h.waitForTerminal(badWave)).reason).toContain(
      'metadata.annotations["argocd.argoproj.io/sync-wave"]: expected an integer, got "soon"',
    );
    await waitUntil(async () => {
      const dead = await sql<{ reason: string }>`
        select reason from sync.dead_letters where consumer = 'sync-requests'`.execute(h.db);
      return dead.rows.some((r) => /manifests/.test(r.reason));
    });
    const rows = await sql<{ sync_id: string; decision: string; reason: string }>`
      select sync_id, decision, reason from audit.sync_decisions where sync_id in (${missing}, 'smuggled')`.execute(
      h.db,
    );
    expect(rows.rows.map((r) => r.decision)).toEqual(['deny']);
    expect(await configMapsIn(a, 'team-a')).not.toContain('s');
    const ok = await h.requestSync({ namespace: 'argocd', name: 'guestbook' }, { objects: [cm('one')] });
    expect(await h.waitForTerminal(ok)).toMatchObject({ status: 'succeeded' });
  });

  it('given an Application deleted with cascade, when the api says so, then everything it owns is deleted as its ServiceAccount and the Application stays until then', async () => {
    const doomed = application('doomed', 'team-a', { server: a.server, namespace: 'team-a' });
    await h.putApplication(doomed);
    const first = await h.requestSync(
      { namespace: 'argocd', name: 'doomed' },
      { objects: [cm('doomed-1'), cm('doomed-2')] },
    );
    expect(await h.waitForTerminal(first)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(a, 'team-a')).toEqual(expect.arrayContaining(['doomed-1', 'doomed-2']));
    // Every applied object carries Argo CD's tracking id naming its Application.
    const live = await a
      .kubeconfigFor('admin')
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'doomed-1', namespace: 'team-a' });
    expect(live.metadata?.annotations?.['argocd.argoproj.io/tracking-id']).toBe(
      'doomed:/ConfigMap:team-a/doomed-1',
    );
    const since = await a.audit.mark();
    const op = await h.requestDeletion(doomed);
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(a, 'team-a')).not.toEqual(expect.arrayContaining(['doomed-1']));
    const deletes = (await a.audit.flush({ since })).filter(
      (e) => e.verb === 'delete' && e.objectRef?.resource === 'configmaps',
    );
    expect(deletes.map((e) => [e.objectRef?.name, effectiveUser(e)]).sort()).toEqual([
      ['doomed-1', 'system:serviceaccount:team-a:deployer'],
      ['doomed-2', 'system:serviceaccount:team-a:deployer'],
    ]);
    const types = (await h.eventsOf(op)).map((e) => e.type);
    expect(types.filter((t) => t === 'io.capstan.sync.resource-synced.v1')).toHaveLength(2);
    expect(types.at(-1)).toBe('io.capstan.sync.deletion-succeeded.v1');
    // The api removes the Application when it learns of the success; until then it is marked.
    const row = await h.db
      .withSchema('sync')
      .selectFrom('applications')
      .select('manifest')
      .where('name', '=', 'doomed')
      .executeTakeFirstOrThrow();
    expect(row.manifest).toMatchObject({ metadata: { deletionTimestamp: expect.any(String) } });
  });

  it('given a dry run, when synced, then the server-side dry-run runs as the ServiceAccount and nothing is written', async () => {
    const since = await a.audit.mark();
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { objects: [cm('one'), cm('dry')], dryRun: true },
    );
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(a, 'team-a')).toEqual(['one']);
    const audit = await a.audit.flush({ since });
    const dry = audit.filter((e) => e.verb === 'patch' && e.objectRef?.name === 'dry');
    expect(dry.map((e) => [effectiveUser(e), e.requestURI.includes('dryRun=All')])).toEqual([
      ['system:serviceaccount:team-a:deployer', true],
    ]);
    const results = (await h.eventsOf(op))
      .filter((e) => e.type.endsWith('resource-synced.v1'))
      .map((e) => [e.data.status, e.data.message]);
    expect(results.map(([status]) => status)).toEqual(['DryRun', 'DryRun']);
    expect(results.map(([, message]) => message).sort()).toEqual([
      'ConfigMap team-a/dry would be created (server-side dry run as system:serviceaccount:team-a:deployer)',
      'ConfigMap team-a/one unchanged (server-side dry run as system:serviceaccount:team-a:deployer)',
    ]);
  });

  it('given a target cluster that is down, when synced, then that sync is retried with backoff and fails while other Applications keep syncing', async () => {
    await h.registerCluster({ server: 'https://127.0.0.1:1' }, 'down');
    await h.putApplication(
      application('unreachable', 'team-a', { server: 'https://127.0.0.1:1', namespace: 'team-a' }),
    );
    const stuck = await h.requestSync({ namespace: 'argocd', name: 'unreachable' }, { objects: [cm('x')] });
    const fine = await h.requestSync({ namespace: 'argocd', name: 'guestbook' }, { objects: [cm('one')] });
    expect(await h.waitForTerminal(fine)).toMatchObject({ status: 'succeeded' });
    const terminal = await h.waitForTerminal(stuck);
    expect(terminal.status).toBe('failed');
    expect(terminal.reason).toContain('target cluster unreachable after 2 attempts');
    const started = (await h.eventsOf(stuck))
      .filter((e) => e.type.endsWith('started.v1'))
      .map((e) => e.data.attempt);
    expect(started).toEqual([1, 2]);
  });

  it('given a target cluster that accepts connections but never answers, when synced, then each request times out and the sync fails after its attempts', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const server = `https://127.0.0.1:${(silent.address() as { port: number }).port}`;
    try {
      await h.registerCluster({ server }, 'silent');
      await h.putApplication(application('hung', 'team-a', { server, namespace: 'team-a' }));
      const op = await h.requestSync({ namespace: 'argocd', name: 'hung' }, { objects: [cm('x')] });
      const terminal = await h.waitForTerminal(op);
      expect(terminal.status).toBe('failed');
      expect(terminal.reason).toContain('target cluster unreachable after 2 attempts');
      expect(terminal.reason).toContain('no answer within 1500 ms');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('given an automated Application, when the repo service reports a new revision, then the reconciler syncs it at that commit as its ServiceAccount', async () => {
    await h.putApplication(
      application(
        'auto',
        'team-a',
        { server: a.server, namespace: 'team-a' },
        {
          source: { repoURL: 'https://git.example.com/apps.git', path: 'auto', targetRevision: 'main' },
          syncPolicy: { automated: { prune: true } },
        },
      ),
    );
    const autoOps = () =>
      h.db
        .withSchema('sync')
        .selectFrom('operations')
        .select(['operation_id', 'status', 'request'])
        .where('app_name', '=', 'auto')
        .execute();
    // New and automated: synced at once, at what its targetRevision resolves to, without any push.
    const first = head.sha;
    await waitUntil(async () => (await autoOps()).some((o) => o.status === 'succeeded'));
    const sha = 'c0ffee'.padEnd(40, '0');
    const event = newEvent(
      repositoryRevisionChanged.type,
      {
        repoURL: 'https://git.example.com/apps.git',
        revision: 'main',
        project: 'team-a',
        sha,
        previousSha: null,
        detectedBy: 'push',
      },
      { subject: 'repository-watches/w1', actor: 'service:repo', source: 'capstan/repo' },
    );
    // The repo service announces revisions: published as its bus user (the api's may not). The
    // reconciler refreshes the Applications reading that repository and revision at once.
    head.sha = sha;
    const repo = await connectBus({ ...h.testBus.connection('repo'), service: 'repo' });
    await repo.publish(event);
    await repo.close();
    let op = '';
    await waitUntil(async () => {
      const found = (await autoOps()).find((o) => (o.request as { revision?: string }).revision === sha);
      op = found?.operation_id ?? '';
      return op !== '';
    });
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    const done = (await h.eventsOf(op)).at(-1)!;
    expect(done.data).toMatchObject({
      revision: sha,
      identity: { username: 'system:serviceaccount:team-a:deployer' },
    });
    // Before the push, the new Application was synced at what its targetRevision resolved to.
    expect((await autoOps()).map((o) => (o.request as { revision?: string }).revision)).toEqual([first, sha]);
    // automated.prune: what the first commit rendered is gone.
    const left = await configMapsIn(a, 'team-a');
    expect(left).toContain('at-c0ffee0');
    expect(left).not.toContain('at-bee0000');
  });

  it('given an object another Application took over, when the first prunes it, then it is left in place (PruneSkipped)', async () => {
    const first = application('giver', 'team-a', { server: a.server, namespace: 'team-a' });
    const second = application('taker', 'team-a', { server: a.server, namespace: 'team-a' });
    await h.putApplication(first);
    await h.putApplication(second);
    const sync = async (name: string, objects: unknown[], prune = false) => {
      const op = await h.requestSync({ namespace: 'argocd', name }, { objects, prune });
      expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
      return (await h.eventsOf(op)).map((e) => e.data);
    };
    await sync('giver', [cm('giver-own'), cm('handed-over')]);
    const taken = await sync('taker', [cm('handed-over')]);
    expect(taken).toContainEqual(
      expect.objectContaining({
        name: 'handed-over',
        status: 'SharedResourceWarning',
        message: 'ConfigMap/handed-over is part of applications taker and giver',
      }),
    );
    const pruned = await sync('giver', [cm('giver-own')], true);
    expect(pruned).toContainEqual(
      expect.objectContaining({
        name: 'handed-over',
        status: 'PruneSkipped',
        message: 'ConfigMap team-a/handed-over not pruned: its tracking id names application taker',
      }),
    );
    expect(await configMapsIn(a, 'team-a')).toContain('handed-over');
    // Steady state: the taker re-applies what it applied before, nobody else records it, no warning.
    const warnings = (data: Record<string, unknown>[]) =>
      data.filter((d) => d.status === 'SharedResourceWarning').map((d) => d.message);
    expect(warnings(await sync('taker', [cm('handed-over')]))).toEqual([]);
    // The giver declares it again (read live: tracked by the taker), then the taker re-applies it
    // (its own record: the giver's record says the giver applied it since).
    expect(warnings(await sync('giver', [cm('giver-own'), cm('handed-over')]))).toEqual([
      'ConfigMap/handed-over is part of applications giver and taker',
    ]);
    expect(warnings(await sync('taker', [cm('handed-over')]))).toEqual([
      'ConfigMap/handed-over is part of applications taker and giver',
    ]);
    await a
      .kubeconfigFor('admin')
      .makeApiClient(CoreV1Api)
      .deleteNamespacedConfigMap({ name: 'handed-over', namespace: 'team-a' });
  });
  // Health drives waves (gitops-engine sync_context.go: a multi-step sync goes on once a wave's
  // resources are Healthy; a Degraded one fails the phase and SyncFail hooks run). The test API
  // server runs no controllers (no kube-controller-manager, no kubelet): nothing ever writes a
  // Deployment's status but this test, which writes the status subresource as the Deployment
  // controller would, so each health the sync sees is the one the test set.
  const deployment = (name: string, wave: number): Record<string, unknown> => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, annotations: { 'argocd.argoproj.io/sync-wave': String(wave) } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        // A fake image: no kubelet would pull it anyway.
        spec: { containers: [{ name: 'app', image: 'registry.invalid/capstan/never-pulled:0' }] },
      },
    },
  });
  const inWave = (name: string, wave: number) =>
    cm(name, { annotations: { 'argocd.argoproj.io/sync-wave': String(wave) } });
  const appsApi = () => a.kubeconfigFor('admin').makeApiClient(AppsV1Api);
  const readDeployment = async (name: string): Promise<V1Deployment | undefined> => {
    try {
      return await appsApi().readNamespacedDeployment({ name, namespace: 'team-a' });
    } catch {
      return undefined;
    }
  };
  /** What the Deployment controller writes (observedGeneration, replica counts, conditions). */
  const setDeploymentStatus = async (
    name: string,
    status: (generation: number) => V1Deployment['status'],
  ) => {
    const live = (await readDeployment(name))!;
    await appsApi().replaceNamespacedDeploymentStatus({
      name,
      namespace: 'team-a',
      body: { ...live, status: status(live.metadata!.generation!) },
    });
  };
  const allowDeployments = async () => {
    const admin = a.kubeconfigFor('admin');
    await ensureRole(admin, 'team-a', 'deploy-workloads', [
      {
        apiGroups: ['apps'],
        resources: ['deployments'],
        verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
      },
      {
        apiGroups: [''],
        resources: ['pods'],
        verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
      },
    ]);
    await ensureRoleBinding(admin, 'team-a', 'deploy-workloads', { kind: 'Role', name: 'deploy-workloads' }, [
      { kind: 'ServiceAccount', name: 'deployer', namespace: 'team-a' },
    ]);
  };

  it('given waves, when wave 0 holds a Deployment, then wave 1 is applied only once the Deployment is available', async () => {
    await allowDeployments();
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { objects: [cm('one'), deployment('web', 0), inWave('after-web', 1)] },
    );
    await waitUntil(async () => (await readDeployment('web')) !== undefined);
    // No status yet (observedGeneration 0): Progressing, so the sync holds wave 1 back.
    await setDeploymentStatus('web', (generation) => ({
      observedGeneration: generation,
      replicas: 2,
      updatedReplicas: 2,
      availableReplicas: 1,
      readyReplicas: 1,
    }));
    expect(await configMapsIn(a, 'team-a')).not.toContain('after-web');
    expect(
      (
        await h.db
          .withSchema('sync')
          .selectFrom('operations')
          .select('status')
          .where('operation_id', '=', op)
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe('running');
    await setDeploymentStatus('web', (generation) => ({
      observedGeneration: generation,
      replicas: 2,
      updatedReplicas: 2,
      availableReplicas: 2,
      readyReplicas: 2,
      conditions: [
        {
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
        },
        {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetAvailable',
          message: 'ReplicaSet "web-1" has successfully progressed.',
        },
      ],
    }));
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(await configMapsIn(a, 'team-a')).toContain('after-web');
    expect((await h.eventsOf(op)).map((e) => e.data)).toContainEqual(
      expect.objectContaining({ kind: 'Deployment', name: 'web', verb: 'wait', status: 'Healthy' }),
    );
    await appsApi().deleteNamespacedDeployment({ name: 'web', namespace: 'team-a' });
  });

  it('given waves, when a Deployment of wave 0 exceeds its progress deadline, then wave 1 never starts and SyncFail hooks run', async () => {
    await allowDeployments();
    const onFail = cm('on-sync-fail', { annotations: { 'argocd.argoproj.io/hook': 'SyncFail' } });
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { objects: [cm('one'), deployment('stuck', 0), inWave('never-applied', 1), onFail] },
    );
    await waitUntil(async () => (await readDeployment('stuck')) !== undefined);
    // The image never pulls; after progressDeadlineSeconds the controller reports the deadline.
    await setDeploymentStatus('stuck', (generation) => ({
      observedGeneration: generation,
      replicas: 2,
      updatedReplicas: 2,
      unavailableReplicas: 2,
      conditions: [
        {
          type: 'Available',
          status: 'False',
          reason: 'MinimumReplicasUnavailable',
          message: 'Deployment does not have minimum availability.',
        },
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "stuck-1" has timed out progressing.',
        },
      ],
    }));
    const terminal = await h.waitForTerminal(op);
    expect(terminal).toEqual({
      status: 'failed',
      reason:
        'one or more synchronization tasks completed unsuccessfully, reason: apps/Deployment/stuck: Deployment "stuck" exceeded its progress deadline',
    });
    const names = await configMapsIn(a, 'team-a');
    expect(names).toContain('on-sync-fail');
    expect(names).not.toContain('never-applied');
    await appsApi().deleteNamespacedDeployment({ name: 'stuck', namespace: 'team-a' });
    await a
      .kubeconfigFor('admin')
      .makeApiClient(CoreV1Api)
      .deleteNamespacedConfigMap({ name: 'on-sync-fail', namespace: 'team-a' });
  });

  it('given a PreSync hook Pod, when it fails, then the hook fails by its health, the Sync phase never runs and SyncFail hooks run', async () => {
    await allowDeployments();
    const core = a.kubeconfigFor('admin').makeApiClient(CoreV1Api);
    const hookPod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'migrate', annotations: { 'argocd.argoproj.io/hook': 'PreSync' } },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: 'registry.invalid/capstan/migrate:0', command: ['migrate'] }],
      },
    };
    const onFail = cm('on-hook-fail', { annotations: { 'argocd.argoproj.io/hook': 'SyncFail' } });
    const op = await h.requestSync(
      { namespace: 'argocd', name: 'guestbook' },
      { objects: [cm('one'), cm('after-hook'), hookPod, onFail] },
    );
    const readPod = async () => {
      try {
        return await core.readNamespacedPod({ name: 'migrate', namespace: 'team-a' });
      } catch {
        return undefined;
      }
    };
    await waitUntil(async () => (await readPod()) !== undefined);
    // No kubelet runs it: the test writes what the kubelet would once its container exits with 1.
    const live = (await readPod())!;
    await core.replaceNamespacedPodStatus({
      name: 'migrate',
      namespace: 'team-a',
      body: {
        ...live,
        status: {
          phase: 'Failed',
          containerStatuses: [
            {
              name: 'main',
              image: 'registry.invalid/capstan/migrate:0',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 1, reason: 'Error' } },
            },
          ],
        },
      },
    });
    expect(await h.waitForTerminal(op)).toEqual({
      status: 'failed',
      reason: 'hook Pod team-a/migrate failed: Degraded: container "main" failed with exit code 1',
    });
    const names = await configMapsIn(a, 'team-a');
    expect(names).toContain('on-hook-fail');
    expect(names).not.toContain('after-hook');
    await core.deleteNamespacedPod({ name: 'migrate', namespace: 'team-a' });
    await core.deleteNamespacedConfigMap({ name: 'on-hook-fail', namespace: 'team-a' });
  });
});
