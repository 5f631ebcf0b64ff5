// Pulled charts on disk, keyed by (repository, chart, exact version, credential used + its version,
// passCredentials): projects resolving to different credentials never share a pulled chart, as
// they never share a checkout. A version constraint (`^1.2`, `*`) is resolved by helm itself and
// the answer reused for revision.cache-ttl-ms; an exact version that is cached never touches the
// network. Pulls of one key are serialised; the cache is bounded in bytes (least recently used
// idle charts evicted) and charts being rendered are leased.
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { isExactChartVersion, normalizeRepoUrl } from '@capstan/policy';
import type { CheckoutCredential } from '../checkouts/checkout-store.js';
import { DiskCache, directoryBytes } from '../checkouts/disk-cache.js';
import { KeyedLock } from '../checkouts/keyed-lock.js';
import { pullChart, type HelmRunner } from './helm-pull.js';

export interface ChartRequest {
  /** The registry or repository URL as helm takes it (https://…, oci://…). */
  url: string;
  chart: string;
  /** Version or constraint (Argo CD's targetRevision; '*' for the newest). */
  version: string;
  credential: CheckoutCredential | null;
  passCredentials: boolean;
  what: string;
}

export interface PulledChart {
  /** The expanded chart (read-only for everyone). */
  dir: string;
  version: string;
  /** Part of every manifest cache key derived from this chart. */
  key: string;
  release(): void;
}

export interface ChartStoreOptions {
  runner: HelmRunner;
  dir: string;
  maxCacheBytes: number;
  resolutionTtlMs: number;
}

export class ChartStore {
  private readonly cache: DiskCache;
  private readonly lock = new KeyedLock();
  private readonly resolutions = new Map<string, { version: string; at: number }>();
  /** Network pulls per chart key (tests see reuse and separation). */
  readonly pulls = new Map<string, number>();

  constructor(private readonly opts: ChartStoreOptions) {
    this.cache = new DiskCache(opts.maxCacheBytes);
  }

  /** The helm runner (egress, bounds) chart dependencies are built with too. */
  get runner(): HelmRunner {
    return this.opts.runner;
  }

  private keyOf(req: ChartRequest, version: string): string {
    const cred = req.credential ? `${req.credential.id}@${req.credential.version}` : 'anonymous';
    return JSON.stringify([normalizeRepoUrl(req.url), req.chart, version, cred, req.passCredentials]);
  }

  private dirOf(key: string): string {
    return path.join(this.opts.dir, createHash('sha256').update(key).digest('hex').slice(0, 32));
  }

  async pull(req: ChartRequest): Promise<PulledChart> {
    const resolutionKey = this.keyOf(req, `constraint:${req.version}`);
    const known = this.resolutions.get(resolutionKey);
    const fresh = known && Date.now() - known.at < this.opts.resolutionTtlMs;
    const exact = isExactChartVersion(req.version)
      ? req.version.replace(/^v/, '')
      : fresh
        ? known.version
        : null;
    if (exact !== null) {
      const key = this.keyOf(req, exact);
      const hit = await this.lease(key, exact, req.chart);
      if (hit) return hit;
    }
    return this.lock.run(`pull:${resolutionKey}`, async () => {
      // A concurrent request for the same chart may have pulled it while this one waited.
      if (exact !== null) {
        const hit = await this.lease(this.keyOf(req, exact), exact, req.chart);
        if (hit) return hit;
      }
      const scratch = path.join(this.opts.dir, `.pull-${randomBytes(8).toString('hex')}`);
      await mkdir(scratch, { recursive: true, mode: 0o700 });
      try {
        const auth = req.credential?.auth ?? null;
        const version = await pullChart(
          this.opts.runner,
          { url: req.url, auth, passCredentials: req.passCredentials },
          req.chart,
          req.version,
          scratch,
          req.what,
        );
        this.resolutions.set(resolutionKey, { version, at: Date.now() });
        const key = this.keyOf(req, version);
        this.pulls.set(key, (this.pulls.get(key) ?? 0) + 1);
        const dir = this.dirOf(key);
        if (!this.cache.has(dir)) {
          await rm(dir, { recursive: true, force: true });
          await rename(scratch, dir);
          this.cache.record(dir, await directoryBytes(dir));
        }
        const leased = await this.lease(key, version, req.chart);
        await this.cache.evict();
        if (!leased) throw new Error(`chart ${req.chart} ${version} vanished from the cache`);
        return leased;
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    });
  }

  private async lease(key: string, version: string, chart: string): Promise<PulledChart | null> {
    const dir = this.dirOf(key);
    if (!this.cache.has(dir)) return null;
    const release = this.cache.lease(dir);
    const chartDir = path.join(dir, chart);
    const present = await access(path.join(chartDir, 'Chart.yaml')).then(
      () => true,
      () => false,
    );
    if (!present) {
      release();
      return null;
    }
    return { dir: chartDir, version, key, release };
  }
}
