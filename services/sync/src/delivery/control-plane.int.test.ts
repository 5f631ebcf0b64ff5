// Control-plane objects in an Application's manifests (argoproj.io AppProject, Application) go to
// the api, never to the target cluster: the sync hands them over with the wish to prune, records
// each result next to the cluster objects' (ApplicationSets included).
// Real PostgreSQL, NATS and kube-apiserver; the harness stands in for the api's
// DeliveredObjectsService and records what it was handed (the api's decisions have their own tests).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { startSyncHarness, type SyncHarness } from '../test-support/harness.js';
import { application, cm, configMapsIn, rendered, teamAProject } from '../test-support/fixtures.js';

const argo = (kind: string, name: string) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind,
  metadata: { name },
  spec: {},
});

describe('control-plane objects delivered from git', () => {
  let cluster: KubeCluster;
  let h: SyncHarness;
  const app = { namespace: 'argocd', name: 'projects' };

  beforeAll(async () => {
    cluster = await startCluster({ name: 'sync-control-plane', log: () => {} });
    await seedTenant(cluster.adminKubeconfig, {
      namespace: 'team-a',
      serviceAccounts: ['deployer'],
      rules: [
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'patch', 'delete'] },
      ],
    });
    h = await startSyncHarness([cluster], { impersonation: true, manifests: rendered });
    await h.registerCluster(cluster, 'a');
    await h.putProject(teamAProject(cluster));
    await h.putApplication(
      application('projects', 'team-a', { server: cluster.server, namespace: 'team-a' }),
    );
  }, 240_000);

  afterAll(async () => {
    await h?.stop();
    await cluster?.stop();
  });

  it('given AppProjects and Applications among the objects, when synced, then the api gets them and the cluster never sees them', async () => {
    const since = await cluster.audit.mark();
    const op = await h.requestSync(app, {
      objects: [cm('beside-projects'), argo('AppProject', 'team-x'), argo('Application', 'web')],
    });
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(h.delivered.at(-1)).toMatchObject({
      application: app,
      operationId: op,
      prune: false,
      cascadeDelete: false,
      objects: [
        { kind: 'AppProject', metadata: { name: 'team-x', namespace: 'team-a' } },
        { kind: 'Application', metadata: { name: 'web', namespace: 'team-a' } },
      ],
    });
    expect(await configMapsIn(cluster, 'team-a')).toEqual(['beside-projects']);
    const argoRequests = (await cluster.audit.flush({ since })).filter(
      (e) => e.objectRef?.apiGroup === 'argoproj.io',
    );
    expect(argoRequests).toEqual([]);
    const events = await h.eventsOf(op);
    const synced = events.filter((e) => e.type === 'io.capstan.sync.resource-synced.v1').map((e) => e.data);
    expect(synced).toContainEqual(
      expect.objectContaining({ group: 'argoproj.io', kind: 'AppProject', name: 'team-x', status: 'Synced' }),
    );
  });

  it('given later syncs without control-plane objects, when synced without and then with prune, then only the prune asks the api, for what was delivered', async () => {
    const before = h.delivered.length;
    const kept = await h.requestSync(app, { objects: [cm('beside-projects')] });
    expect(await h.waitForTerminal(kept)).toMatchObject({ status: 'succeeded' });
    expect(h.delivered.length).toBe(before);
    const op = await h.requestSync(app, { objects: [cm('beside-projects')], prune: true });
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(h.delivered.at(-1)).toMatchObject({ operationId: op, prune: true, objects: [] });
  });

  it('given an ApplicationSet among the objects, when synced, then it is handed to the api like the others', async () => {
    const op = await h.requestSync(app, { objects: [argo('ApplicationSet', 'addons')] });
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    expect(h.delivered.at(-1)).toMatchObject({
      operationId: op,
      objects: [{ kind: 'ApplicationSet', metadata: { name: 'addons', namespace: 'team-a' } }],
    });
  });
});
