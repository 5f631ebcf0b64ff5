// The repo service's metrics: Argo CD's repo-server git metrics under `capstan_` with Argo's labels
// (`repo`: the URL as Argo CD normalises it, user and password removed — never a credential), and
// Capstan's own render-cache and credential-selection figures, whose labels are small fixed sets.
// Every metric is declared once in the libs/service metric catalog.
import { metricOf, repoLabel, type MetricsRegistry } from '@capstan/service';

/** One network request to a git server (Argo CD's request_type: `fetch`, a first clone included). */
export interface GitRequest {
  url: string;
  revision: string;
  requestType: 'fetch' | 'ls-remote';
  seconds: number;
  failed: boolean;
}

/** What the checkout layer reports. */
export interface CheckoutObserver {
  gitRequest(request: GitRequest): void;
}

/** What manifest generation reports. */
export interface RenderObserver {
  manifestCache(result: 'hit' | 'miss'): void;
  rendered(sourceType: string, seconds: number): void;
}

export class RepoMetrics implements CheckoutObserver, RenderObserver {
  private readonly git;
  private readonly gitSeconds;
  private readonly gitFailures;
  private readonly cache;
  private readonly renderSeconds;
  private readonly lookups;

  constructor(registry: MetricsRegistry, cacheBytes: () => number) {
    this.git = metricOf(registry, 'gitRequest');
    this.gitSeconds = metricOf(registry, 'gitRequestDuration');
    this.gitFailures = metricOf(registry, 'gitFetchFail');
    this.cache = metricOf(registry, 'manifestCache');
    this.renderSeconds = metricOf(registry, 'renderDuration');
    this.lookups = metricOf(registry, 'credentialLookups');
    metricOf(registry, 'checkoutCacheBytes', {
      collect() {
        this.set(cacheBytes());
      },
    });
  }

  gitRequest(r: GitRequest): void {
    const repo = repoLabel(r.url);
    this.git.inc({ repo, request_type: r.requestType });
    this.gitSeconds.observe({ repo, request_type: r.requestType }, r.seconds);
    if (r.failed && r.requestType === 'fetch') this.gitFailures.inc({ repo, revision: r.revision });
  }

  manifestCache(result: 'hit' | 'miss'): void {
    this.cache.inc({ result });
  }

  rendered(sourceType: string, seconds: number): void {
    this.renderSeconds.observe({ source_type: sourceType }, seconds);
  }

  credentialLookup(reason: string): void {
    this.lookups.inc({ reason });
  }
}
