// The metric catalog: every metric a Capstan service registers, declared once with its name, help,
// type, labels and owning service, and created only through `metricOf` from here. Where Argo CD has
// the metric, the name is Argo's with `capstan_` for `argocd_` and the labels are Argo's
// (controller/metrics, applicationset/metrics, reposerver/metrics), so Argo's dashboards and alerts
// carry over by renaming the prefix. The Grafana dashboard (deploy/grafana) is checked against this
// catalog, and each service's /metrics is checked to expose the entries it owns.
//
// Labels hold names an operator already sees (Application, project, cluster server, repository URL
// without credentials) — bounded by the number of those objects — never a secret or a user.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { normalizeRepoUrl } from '@capstan/policy';

export type MetricService = 'api' | 'repo' | 'sync' | 'appset';

/** The registry a service's /metrics serves (ServiceContext.metrics). */
export type MetricsRegistry = Registry;

type MetricKind = 'counter' | 'gauge' | 'histogram';

interface MetricDef<L extends string, T extends MetricKind = MetricKind> {
  readonly name: string;
  readonly help: string;
  readonly type: T;
  readonly labels: readonly L[];
  readonly service: MetricService;
  readonly buckets?: readonly number[];
}

const def = <L extends string, T extends MetricKind>(d: MetricDef<L, T>): MetricDef<L, T> => d;

const APP = ['namespace', 'name', 'project'] as const;

export const metricCatalog = {
  // api
  apiRequestDuration: def({
    name: 'capstan_api_request_duration_seconds',
    help: 'time from a call reaching the api to its answer',
    type: 'histogram',
    labels: ['operation', 'transport', 'code'],
    service: 'api',
    buckets: [0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  }),
  webhookRequests: def({
    name: 'capstan_webhook_requests_total',
    help: 'Git webhook deliveries by provider and outcome (Argo CD: argocd_webhook_requests_total).',
    type: 'counter',
    labels: ['provider', 'outcome'],
    service: 'api',
  }),
  // sync (Argo CD's application controller)
  appInfo: def({
    name: 'capstan_app_info',
    help: 'Information about application.',
    type: 'gauge',
    labels: [
      ...APP,
      'autosync_enabled',
      'repo',
      'dest_server',
      'dest_namespace',
      'sync_status',
      'health_status',
      'operation',
    ],
    service: 'sync',
  }),
  appSync: def({
    name: 'capstan_app_sync_total',
    help: 'Number of application syncs.',
    type: 'counter',
    labels: [...APP, 'dest_server', 'phase', 'dry_run'],
    service: 'sync',
  }),
  appSyncDuration: def({
    name: 'capstan_app_sync_duration_seconds_total',
    help: 'Application sync performance in seconds total.',
    type: 'counter',
    labels: [...APP, 'dest_server'],
    service: 'sync',
  }),
  appK8sRequest: def({
    name: 'capstan_app_k8s_request_total',
    help: 'Number of kubernetes requests executed during application sync.',
    type: 'counter',
    labels: [...APP, 'server', 'response_code', 'verb', 'resource_kind', 'resource_namespace', 'dry_run'],
    service: 'sync',
  }),
  appReconcile: def({
    name: 'capstan_app_reconcile',
    help: 'Application reconciliation performance in seconds.',
    type: 'histogram',
    labels: ['namespace', 'dest_server'],
    service: 'sync',
    buckets: [0.25, 0.5, 1, 2, 4, 8, 16],
  }),
  clusterInfo: def({
    name: 'capstan_cluster_info',
    help: 'Information about cluster.',
    type: 'gauge',
    labels: ['server', 'k8s_version', 'name'],
    service: 'sync',
  }),
  clusterResourceObjects: def({
    name: 'capstan_cluster_api_resource_objects',
    help: 'Number of k8s resource objects in the cache.',
    type: 'gauge',
    labels: ['server'],
    service: 'sync',
  }),
  clusterResources: def({
    name: 'capstan_cluster_api_resources',
    help: 'Number of monitored kubernetes API resources.',
    type: 'gauge',
    labels: ['server'],
    service: 'sync',
  }),
  // appset (Argo CD's ApplicationSet controller)
  appsetInfo: def({
    name: 'capstan_appset_info',
    help: 'Information about applicationset',
    type: 'gauge',
    labels: ['namespace', 'name', 'resource_update_status'],
    service: 'appset',
  }),
  appsetOwnedApplications: def({
    name: 'capstan_appset_owned_applications',
    help: 'Number of applications owned by the applicationset',
    type: 'gauge',
    labels: ['namespace', 'name'],
    service: 'appset',
  }),
  appsetReconcile: def({
    name: 'capstan_appset_reconcile',
    help: 'Application reconciliation performance in seconds.',
    type: 'histogram',
    labels: ['namespace', 'name'],
    service: 'appset',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  }),
  // repo (Argo CD's repo server)
  gitRequest: def({
    name: 'capstan_git_request_total',
    help: 'Number of git requests performed by repo server',
    type: 'counter',
    labels: ['repo', 'request_type'],
    service: 'repo',
  }),
  gitRequestDuration: def({
    name: 'capstan_git_request_duration_seconds',
    help: 'Git requests duration seconds.',
    type: 'histogram',
    labels: ['repo', 'request_type'],
    service: 'repo',
    buckets: [0.1, 0.25, 0.5, 1, 2, 4, 10, 20],
  }),
  gitFetchFail: def({
    name: 'capstan_git_fetch_fail_total',
    help: 'Number of git fetch requests failures by repo server',
    type: 'counter',
    labels: ['repo', 'revision'],
    service: 'repo',
  }),
  // repo: Capstan's own
  manifestCache: def({
    name: 'capstan_repo_manifest_cache_total',
    help: 'manifest requests answered from the render cache (hit) or rendered (miss)',
    type: 'counter',
    labels: ['result'],
    service: 'repo',
  }),
  renderDuration: def({
    name: 'capstan_repo_render_seconds',
    help: 'duration of rendering one source (checkout excluded)',
    type: 'histogram',
    labels: ['source_type'],
    service: 'repo',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
  }),
  credentialLookups: def({
    name: 'capstan_repo_credential_lookups_total',
    help: 'credential selections for Applications by reason (project-match, unscoped-fallback, none)',
    type: 'counter',
    labels: ['reason'],
    service: 'repo',
  }),
  checkoutCacheBytes: def({
    name: 'capstan_repo_checkout_cache_bytes',
    help: 'bytes of mirrors and exported trees on disk',
    type: 'gauge',
    labels: [],
    service: 'repo',
  }),
} as const;

type Catalog = typeof metricCatalog;
type LabelsOf<K extends keyof Catalog> = Catalog[K]['labels'][number];
type MetricTypeOf<K extends keyof Catalog, L extends string> = Catalog[K]['type'] extends 'counter'
  ? Counter<L>
  : Catalog[K]['type'] extends 'gauge'
    ? Gauge<L>
    : Histogram<L>;

/** The catalog entries a service owns (its /metrics must expose each). */
export function metricsOf(service: MetricService): { name: string; type: string }[] {
  return Object.values(metricCatalog as Record<string, MetricDef<string>>)
    .filter((d) => d.service === service)
    .map((d) => ({ name: d.name, type: d.type }));
}

/**
 * Creates and registers the catalog's metric `key`. `collect` (gauges) runs at every scrape: it
 * sets the values from the source of truth, so what is gone stops being reported.
 */
export function metricOf<K extends keyof Catalog>(
  registry: Registry,
  key: K,
  options: { collect?: (this: Gauge<LabelsOf<K>>) => void | Promise<void> } = {},
): MetricTypeOf<K, LabelsOf<K>> {
  const d = metricCatalog[key] as MetricDef<LabelsOf<K>>;
  const common = { name: d.name, help: d.help, labelNames: [...d.labels], registers: [registry] };
  switch (d.type) {
    case 'counter':
      return new Counter(common) as MetricTypeOf<K, LabelsOf<K>>;
    case 'gauge':
      return new Gauge({
        ...common,
        ...(options.collect ? { collect: options.collect } : {}),
      }) as MetricTypeOf<K, LabelsOf<K>>;
    case 'histogram':
      return new Histogram({
        ...common,
        ...(d.buckets ? { buckets: [...d.buckets] } : {}),
      }) as MetricTypeOf<K, LabelsOf<K>>;
  }
}

/**
 * A repository URL as a label: Argo CD's normalised form (NormalizeGitURL: lower-cased, no `.git`,
 * no trailing `/`), with any user and password, query and fragment removed first.
 */
export function repoLabel(url: string): string {
  let bare = url.trim();
  try {
    const parsed = new URL(bare);
    if (parsed.protocol !== 'file:') {
      parsed.username = '';
      parsed.password = '';
      parsed.search = '';
      parsed.hash = '';
      bare = parsed.toString();
    }
  } catch {
    // scp-like `git@host:org/repo`: the user names no secret (ssh keys authenticate).
  }
  return normalizeRepoUrl(bare);
}
