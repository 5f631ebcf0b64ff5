// The sync service's metrics: Argo CD's application-controller metrics under `capstan_`, same labels
// (libs/service metric catalog). Counters and histograms are fed where things happen (a finished
// sync, a request to a target cluster, a reconcile); the info gauges are read at each scrape from the
// source of truth — the read model and the published verdicts in PostgreSQL, the informers' caches —
// so an Application or cluster that is gone is no longer reported.
import { AsyncLocalStorage } from 'node:async_hooks';
import { metricOf, type Logger, type MetricsRegistry } from '@capstan/service';
import type { SyncDb } from '../sync.table.js';
import { appInfoRows, clusterInfoRows } from './info-rows.js';

/** The Application a piece of work is for: the labels its metrics carry. */
export interface AppScope {
  namespace: string;
  name: string;
  project: string;
  /** The resolved destination server ('' until known). */
  destServer: string;
  dryRun: boolean;
}

/** Per target cluster: watched API resources, objects in the informers' caches, Kubernetes version. */
export type CacheStats = () => Map<string, { resources: number; objects: number; version: string }>;

const scopes = new AsyncLocalStorage<{ scope: AppScope; metrics: SyncMetrics }>();

export class SyncMetrics {
  private readonly syncs;
  private readonly syncSeconds;
  private readonly requests;
  private readonly reconciles;
  private cacheStats: CacheStats = () => new Map();

  constructor(registry: MetricsRegistry, db: SyncDb, logger: Logger) {
    this.syncs = metricOf(registry, 'appSync');
    this.syncSeconds = metricOf(registry, 'appSyncDuration');
    this.requests = metricOf(registry, 'appK8sRequest');
    this.reconciles = metricOf(registry, 'appReconcile');
    // A scrape never fails on a database hiccup: the info gauges are then left out of that scrape.
    const failed = (what: string) => (err: unknown) =>
      logger.warn({ err: (err as Error).message }, `collecting ${what} for /metrics failed`);
    metricOf(registry, 'appInfo', {
      async collect() {
        this.reset();
        const rows = await appInfoRows(db).catch(failed('capstan_app_info'));
        for (const r of rows ?? []) this.set(r, 1);
      },
    });
    const stats = () => this.cacheStats();
    metricOf(registry, 'clusterInfo', {
      async collect() {
        this.reset();
        const rows = await clusterInfoRows(db).catch(failed('capstan_cluster_info'));
        const versions = stats();
        for (const r of rows ?? [])
          this.set({ server: r.server, name: r.name, k8s_version: versions.get(r.server)?.version ?? '' }, 1);
      },
    });
    metricOf(registry, 'clusterResourceObjects', {
      collect() {
        this.reset();
        for (const [server, s] of stats()) this.set({ server }, s.objects);
      },
    });
    metricOf(registry, 'clusterResources', {
      collect() {
        this.reset();
        for (const [server, s] of stats()) this.set({ server }, s.resources);
      },
    });
  }

  /** Where the cluster cache gauges read from (the reconciler's informers, once it runs). */
  readCacheStatsFrom(stats: CacheStats): void {
    this.cacheStats = stats;
  }

  /**
   * Runs one sync attempt in the Application's scope (its requests to target clusters are counted
   * for it); a terminal outcome is counted with Argo's phase and its duration.
   */
  async sync<T extends string>(scope: AppScope, attempt: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const outcome = await scopes.run({ scope, metrics: this }, attempt);
    const phase = outcome === 'succeeded' ? 'Succeeded' : outcome === 'failed' ? 'Failed' : undefined;
    if (phase) {
      const app = { namespace: scope.namespace, name: scope.name, project: scope.project };
      this.syncs.inc({ ...app, dest_server: scope.destServer, phase, dry_run: String(scope.dryRun) });
      this.syncSeconds.inc({ ...app, dest_server: scope.destServer }, (performance.now() - started) / 1000);
    }
    return outcome;
  }

  /** One reconcile (desired state rendered and compared) of an Application. */
  reconciled(namespace: string, destServer: string, seconds: number): void {
    this.reconciles.observe({ namespace, dest_server: destServer }, seconds);
  }

  private request(scope: AppScope, r: KubeRequest, responseCode: string): void {
    this.requests.inc({
      namespace: scope.namespace,
      name: scope.name,
      project: scope.project,
      server: r.server,
      response_code: responseCode,
      verb: r.verb,
      resource_kind: r.kind,
      resource_namespace: r.namespace ?? '',
      dry_run: String(scope.dryRun),
    });
  }

  /** Counts a finished request to a target cluster for the Application whose work made it. */
  static requestDone(r: KubeRequest, err: unknown): void {
    const current = scopes.getStore();
    if (current) current.metrics.request(current.scope, r, responseCodeOf(err));
  }

  /** The scope of the work in progress (steps fill in project and destination as they learn them). */
  static currentScope(): AppScope | undefined {
    return scopes.getStore()?.scope;
  }
}

export interface KubeRequest {
  server: string;
  verb: string;
  kind: string;
  namespace?: string | undefined;
}

/**
 * The HTTP status of the answer; client-node does not hand out the status of a success, so a
 * success is `2xx`; no answer at all (timeout, connection refused) is `unreachable`.
 */
function responseCodeOf(err: unknown): string {
  if (err === undefined) return '2xx';
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? String(code) : 'unreachable';
}
