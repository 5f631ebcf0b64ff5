// The sync service's /metrics, scraped over HTTP from its ops port after real work: syncs against a
// real kube-apiserver as the resolved ServiceAccount, the reconciler watching the result, with the
// Application's state in PostgreSQL and the events on NATS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredMetrics, metricsOf, parseMetricsText, sampleValue } from '@capstan/service';
import { seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { startSyncHarness, waitUntil, type SyncHarness } from '../test-support/harness.js';
import { application, cm, rendered, teamAProject } from '../test-support/fixtures.js';

let a: KubeCluster;
let h: SyncHarness;
const app = { namespace: 'argocd', name: 'metered' };

async function scrape(): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${h.service.opsPort}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

beforeAll(async () => {
  a = await startCluster({ name: 'sync-metrics', log: () => {} });
  await seedTenant(a.adminKubeconfig, {
    namespace: 'team-a',
    serviceAccounts: ['deployer'],
    rules: [
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
      },
    ],
  });
  h = await startSyncHarness([a], { impersonation: true, manifests: rendered });
  await h.registerCluster(a, 'metrics-cluster');
  await h.putProject(teamAProject(a));
  await h.putApplication(
    application(
      app.name,
      'team-a',
      { server: a.server, namespace: 'team-a' },
      {
        // The repo label is the URL as Argo CD normalises it (Applications may not carry a user or
        // password in it at all: refused at validation).
        source: {
          repoURL: 'https://Git.Example.com/Team/Apps.git/',
          path: '.',
          targetRevision: 'HEAD',
        },
      },
    ),
  );
}, 240_000);

afterAll(async () => {
  await h?.stop();
  await a?.stop();
});

describe('sync service /metrics', () => {
  it('counts a successful sync with Argo CD labels, and its requests to the cluster', async () => {
    const labels = { ...app, project: 'team-a', dest_server: a.server };
    const before = parseMetricsText(await scrape());
    expect(sampleValue(before, 'capstan_app_sync_total', labels)).toBe(0);
    const op = await h.requestSync(app, { objects: [cm('metered-one')] });
    expect(await h.waitForTerminal(op)).toEqual({ status: 'succeeded', reason: 'synced' });
    const after = parseMetricsText(await scrape());
    expect(
      sampleValue(after, 'capstan_app_sync_total', { ...labels, phase: 'Succeeded', dry_run: 'false' }),
    ).toBe(1);
    expect(sampleValue(after, 'capstan_app_sync_duration_seconds_total', labels)).toBeGreaterThan(0);
    // The server-side apply of the ConfigMap, as Argo CD's verbs name it.
    expect(
      sampleValue(after, 'capstan_app_k8s_request_total', {
        ...app,
        project: 'team-a',
        server: a.server,
        verb: 'Patch',
        resource_kind: 'ConfigMap',
        resource_namespace: 'team-a',
        response_code: '2xx',
        dry_run: 'false',
      }),
    ).toBe(1);
    expect(
      sampleValue(after, 'capstan_app_k8s_request_total', {
        ...app,
        verb: 'Create',
        resource_kind: 'SelfSubjectAccessReview',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts a refused sync as Failed and a dry run with dry_run="true"', async () => {
    const labels = { ...app, project: 'team-a', dest_server: a.server };
    // The deployer may not write Secrets: the pre-flight access review refuses the sync.
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'nope' }, stringData: {} };
    const failed = await h.requestSync(app, { objects: [secret] });
    expect(await h.waitForTerminal(failed)).toMatchObject({ status: 'failed' });
    const dry = await h.requestSync(app, { objects: [cm('metered-one')], dryRun: true });
    expect(await h.waitForTerminal(dry)).toMatchObject({ status: 'succeeded' });
    const samples = parseMetricsText(await scrape());
    expect(
      sampleValue(samples, 'capstan_app_sync_total', { ...labels, phase: 'Failed', dry_run: 'false' }),
    ).toBe(1);
    expect(
      sampleValue(samples, 'capstan_app_sync_total', { ...labels, phase: 'Succeeded', dry_run: 'true' }),
    ).toBe(1);
    expect(
      sampleValue(samples, 'capstan_app_k8s_request_total', { ...app, verb: 'Patch', dry_run: 'true' }),
    ).toBe(1);
  });

  it('reports the Application, its reconciles and the cluster cache as the reconciler sees them', async () => {
    // What the source renders now (no staged objects), the earlier ConfigMap pruned: Synced.
    const op = await h.requestSync(app, { prune: true });
    expect(await h.waitForTerminal(op)).toMatchObject({ status: 'succeeded' });
    let text = '';
    await waitUntil(async () => {
      text = await scrape();
      return sampleValue(parseMetricsText(text), 'capstan_app_info', { ...app, sync_status: 'Synced' }) === 1;
    }, 60_000);
    const samples = parseMetricsText(text);
    const info = samples.filter((s) => s.name === 'capstan_app_info' && s.labels.name === app.name);
    expect(info).toHaveLength(1);
    expect(info[0]!.labels).toMatchObject({
      namespace: 'argocd',
      project: 'team-a',
      autosync_enabled: 'false',
      repo: 'https://git.example.com/team/apps',
      dest_server: a.server,
      dest_namespace: 'team-a',
      sync_status: 'Synced',
      health_status: 'Healthy',
      service: 'sync',
    });
    expect(
      sampleValue(samples, 'capstan_app_reconcile_count', { namespace: 'argocd', dest_server: a.server }),
    ).toBeGreaterThan(0);
    const cluster = samples.filter((s) => s.name === 'capstan_cluster_info');
    expect(cluster).toHaveLength(1);
    expect(cluster[0]!.labels).toMatchObject({ server: a.server, name: 'metrics-cluster' });
    // The version the API server reports (GET /version, read once by the reconciler).
    expect(cluster[0]!.labels.k8s_version).toMatch(/^v1\.\d+\.\d+/);
    expect(
      sampleValue(samples, 'capstan_cluster_api_resources', { server: a.server }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sampleValue(samples, 'capstan_cluster_api_resource_objects', { server: a.server }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('declares every metric of the catalog the sync service owns', async () => {
    const declared = declaredMetrics(await scrape());
    for (const m of metricsOf('sync')) expect(declared.get(m.name), m.name).toBe(m.type);
  });
});
