// The repo service's metrics. Labels are small fixed sets (operation, outcome, source type,
// selection reason): never a URL, project, user or anything secret, so cardinality stays bounded
// and nothing of a tenant leaks into the metrics pipeline.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CapstanError } from '@capstan/service';

export type GitOperation = 'clone' | 'fetch';

/** What the checkout layer reports. */
export interface CheckoutObserver {
  gitOperation(operation: GitOperation, outcome: string, seconds: number): void;
}

/** What manifest generation reports. */
export interface RenderObserver {
  manifestCache(result: 'hit' | 'miss'): void;
  rendered(sourceType: string, seconds: number): void;
}

export function outcomeOf(err: unknown): string {
  const code = (err as Partial<CapstanError> | undefined)?.code;
  return typeof code === 'string' ? code.toLowerCase() : 'error';
}

export class RepoMetrics implements CheckoutObserver, RenderObserver {
  private readonly git: Counter<'operation' | 'outcome'>;
  private readonly gitSeconds: Histogram<'operation'>;
  private readonly cache: Counter<'result'>;
  private readonly renderSeconds: Histogram<'source_type'>;
  private readonly lookups: Counter<'reason'>;

  constructor(registry: Registry, cacheBytes: () => number) {
    this.git = new Counter({
      name: 'capstan_repo_git_operations_total',
      help: 'git network operations (clone of a new mirror, fetch of an existing one) by outcome',
      labelNames: ['operation', 'outcome'],
      registers: [registry],
    });
    this.gitSeconds = new Histogram({
      name: 'capstan_repo_git_operation_seconds',
      help: 'duration of git network operations',
      labelNames: ['operation'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
      registers: [registry],
    });
    this.cache = new Counter({
      name: 'capstan_repo_manifest_cache_total',
      help: 'manifest requests answered from the render cache (hit) or rendered (miss)',
      labelNames: ['result'],
      registers: [registry],
    });
    this.renderSeconds = new Histogram({
      name: 'capstan_repo_render_seconds',
      help: 'duration of rendering one source (checkout excluded)',
      labelNames: ['source_type'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
      registers: [registry],
    });
    this.lookups = new Counter({
      name: 'capstan_repo_credential_lookups_total',
      help: 'credential selections for Applications by reason (project-match, unscoped-fallback, none)',
      labelNames: ['reason'],
      registers: [registry],
    });
    new Gauge({
      name: 'capstan_repo_checkout_cache_bytes',
      help: 'bytes of mirrors and exported trees on disk',
      registers: [registry],
      collect() {
        this.set(cacheBytes());
      },
    });
  }

  gitOperation(operation: GitOperation, outcome: string, seconds: number): void {
    this.git.inc({ operation, outcome });
    this.gitSeconds.observe({ operation }, seconds);
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
