import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { metricCatalog, metricOf, metricsOf, repoLabel } from './metrics.js';
import { declaredMetrics, parseMetricsText, sampleValue } from './metrics-text.js';

describe('metric catalog', () => {
  it("names Argo CD's metrics with the capstan_ prefix and Argo's labels", () => {
    expect(metricCatalog.appInfo.name).toBe('capstan_app_info');
    expect(metricCatalog.appInfo.labels).toEqual([
      'namespace',
      'name',
      'project',
      'autosync_enabled',
      'repo',
      'dest_server',
      'dest_namespace',
      'sync_status',
      'health_status',
      'operation',
    ]);
    expect(metricCatalog.appSync.labels).toEqual([
      'namespace',
      'name',
      'project',
      'dest_server',
      'phase',
      'dry_run',
    ]);
    expect(metricCatalog.gitRequest.labels).toEqual(['repo', 'request_type']);
  });

  it('declares each name once and every name as Prometheus allows', () => {
    const names = Object.values(metricCatalog).map((d) => d.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^capstan_[a-z0-9_]+$/);
  });

  it('lists the metrics a service owns', () => {
    const sync = metricsOf('sync').map((m) => m.name);
    expect(sync).toContain('capstan_app_sync_total');
    expect(sync).not.toContain('capstan_git_request_total');
    expect(metricsOf('repo').map((m) => m.name)).toContain('capstan_git_request_total');
  });

  it('creates counters, gauges (collected at scrape) and histograms with the catalog buckets', async () => {
    const registry = new Registry();
    const c = metricOf(registry, 'appSync');
    c.inc({
      namespace: 'argocd',
      name: 'guestbook',
      project: 'p',
      dest_server: 's',
      phase: 'Succeeded',
      dry_run: 'false',
    });
    let collected = 0;
    metricOf(registry, 'clusterInfo', {
      collect() {
        collected++;
        this.set({ server: 'https://k', name: 'in-cluster', k8s_version: '' }, 1);
      },
    });
    const h = metricOf(registry, 'appReconcile');
    h.observe({ namespace: 'argocd', dest_server: 's' }, 0.3);
    const text = await registry.metrics();
    expect(collected).toBe(1);
    expect(text).toContain(
      'capstan_app_sync_total{namespace="argocd",name="guestbook",project="p",dest_server="s",phase="Succeeded",dry_run="false"} 1',
    );
    expect(text).toContain('capstan_cluster_info{server="https://k",name="in-cluster",k8s_version=""} 1');
    expect(text).toContain('capstan_app_reconcile_bucket{le="0.5",namespace="argocd",dest_server="s"} 1');
    expect(text).toContain('# TYPE capstan_app_reconcile histogram');
  });
});

describe('repoLabel', () => {
  it('removes user and password, query and fragment, and normalises as Argo CD does', () => {
    expect(repoLabel('https://alice:s3cret@Git.Example.com/Team/Apps.git/')).toBe(
      'https://git.example.com/team/apps',
    );
    expect(repoLabel('https://token@git.example.com/a/b?x=1#f')).toBe('https://git.example.com/a/b');
    expect(repoLabel('git@github.com:org/repo.git')).toBe('git@github.com/org/repo');
    expect(repoLabel('ssh://git@host:2222/org/repo')).toBe('host:2222/org/repo');
  });
});

describe('reading /metrics back', () => {
  it('parses samples with escaped label values, declared families, and sums matching samples', async () => {
    const registry = new Registry();
    const c = metricOf(registry, 'gitRequest');
    c.inc({ repo: 'https://h/a "quoted"\\path', request_type: 'fetch' }, 2);
    c.inc({ repo: 'https://h/b', request_type: 'fetch' });
    const text = await registry.metrics();
    const samples = parseMetricsText(text);
    expect(sampleValue(samples, 'capstan_git_request_total', { repo: 'https://h/a "quoted"\\path' })).toBe(2);
    expect(sampleValue(samples, 'capstan_git_request_total', { request_type: 'fetch' })).toBe(3);
    expect(sampleValue(samples, 'capstan_git_request_total', { repo: 'nope' })).toBe(0);
    expect(declaredMetrics(text).get('capstan_git_request_total')).toBe('counter');
  });
});

describe('edges', () => {
  it('reads escaped newlines and skips lines that are no sample', () => {
    const samples = parseMetricsText(
      'x_total{a="l1\\nl2"} 3\nnot a sample line at all\n\n# HELP x_total x\ny 1 1700000000\n',
    );
    expect(samples).toEqual([
      { name: 'x_total', labels: { a: 'l1\nl2' }, value: 3 },
      { name: 'y', labels: {}, value: 1 },
    ]);
  });

  it('labels a file:// repository by its path, normalised', () => {
    expect(repoLabel('file:///srv/Git/Repo.git')).toBe('file:///srv/git/repo');
  });
});
