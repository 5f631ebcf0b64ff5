// The reconciler: for every Application, desired state (desired.ts, refreshed on its triggers) against
// live state (informers.ts, as the Application's resolved identity), a verdict (verdict.ts) published
// as `sync.status-changed` only when it changed (status.repository.ts), and automation
// (automation.ts) queuing syncs into the same durable queue as every other sync.
//
// Refresh triggers (desired state re-rendered): the Application created or updated, its project or
// cluster changed, a new revision of its repository, a finished sync of it, and the periodic full
// resync (`reconcile.resync-ms`, jittered). Watch events only re-compare, from the caches.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { HealthAssessor } from '@capstan/health';
import type { Logger } from '@capstan/service';
import type { SyncDb } from '../sync.table.js';
import { FIELD_MANAGER } from '../kube/target-cluster.js';
import { allApplications } from '../read-model/read-model.repository.js';
import { loadDesired, type DesiredDeps, type DesiredFailure, type DesiredState } from './desired.js';
import { InformerRegistry } from './informers.js';
import { LiveIndex, objectKey } from './live-index.js';
import { watchKeyText } from './watch-key.js';
import { fingerprintOf, unknownVerdict, verdictOf, type Verdict } from './verdict.js';
import {
  appKeyOf,
  forgetPublished,
  loadPublished,
  publishChanges,
  type PublishedStatus,
  type StatusChange,
} from './status.repository.js';
import { livePairs } from './pairs.js';
import { readsRevision, type RevisionChange } from './revision-match.js';
import { Automation } from './automation-runner.js';
import type { SelfHealPolicy } from './automation.js';
import type { SyncMetrics } from '../observability/sync-metrics.js';

export interface ReconcilerOptions {
  resyncMs: number;
  selfHeal: SelfHealPolicy;
  requestTimeoutMs: number;
  /** Applications whose desired state is loaded at the same time. */
  refreshConcurrency?: number;
}

export interface ReconcilerDeps extends DesiredDeps {
  db: SyncDb;
  logger: Logger;
  health: HealthAssessor;
  /** Wakes the sync workers after automation queued operations. */
  wake(count?: number): void;
  /** capstan_app_reconcile and the cluster cache gauges. */
  metrics?: SyncMetrics;
}

interface AppEntry {
  ref: { namespace: string; name: string };
  desired?: DesiredState | DesiredFailure;
  informers: Set<string>;
  instance?: string;
  declared: string[];
  nextResyncAt: number;
}

export class Reconciler {
  private readonly apps = new Map<string, AppEntry>();
  private published = new Map<string, PublishedStatus>();
  private readonly index = new LiveIndex();
  private readonly informers: InformerRegistry;
  private readonly dirty = new Set<string>();
  private readonly refreshQueue = new Set<string>();
  private refreshing = 0;
  private readonly loading = new Set<Promise<void>>();
  private pumping: Promise<void> | undefined;
  private tick: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly automation: Automation;
  /** Called after each compare pass (benchmarks and tests follow the reconciler with it). */
  onPass?: (compared: number, changed: number) => void;

  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly options: ReconcilerOptions,
  ) {
    this.informers = new InformerRegistry(
      {
        changed: (informer, obj, deleted) => this.observed(informer, obj, deleted),
        stateChanged: (_informer, users) => this.markDirty(users),
      },
      deps.logger,
      options.requestTimeoutMs,
    );
    this.automation = new Automation(deps, options.selfHeal, (app) => this.markDirty([app]));
    deps.metrics?.readCacheStatsFrom(() => this.informers.statsByServer());
  }

  async start(): Promise<void> {
    this.published = await loadPublished(this.deps.db);
    for (const row of await allApplications(this.deps.db))
      this.refresh({ namespace: row.namespace, name: row.name });
    this.tick = setInterval(() => this.resyncDue(), 1_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.tick);
    this.automation.stop();
    await Promise.allSettled([...this.loading]);
    await this.pumping;
    await this.informers.stop();
  }

  /** Re-render the Application's desired state and compare (an Application, project or cluster event). */
  refresh(app: { namespace: string; name: string }): void {
    if (this.stopped) return;
    this.refreshQueue.add(appKeyOf(app));
    this.startRefreshes();
  }

  /** A sync of this Application finished in this process. */
  syncFinished(app: { namespace: string; name: string }): void {
    this.automation.forgetChecked(appKeyOf(app));
    this.refresh(app);
  }

  async forget(app: { namespace: string; name: string }): Promise<void> {
    const key = appKeyOf(app);
    const entry = this.apps.get(key);
    if (entry) {
      this.index.setApplication(key, undefined, [], {
        ...(entry.instance ? { instance: entry.instance } : {}),
        declared: entry.declared,
      });
      this.release(key, entry.informers);
      this.apps.delete(key);
    }
    this.published.delete(key);
    this.automation.forgetChecked(key);
    await forgetPublished(this.deps.db, app);
  }

  projectChanged(project: string): void {
    for (const [, e] of this.apps)
      if (!e.desired || !e.desired.ok || e.desired.projectChain.includes(project)) this.refresh(e.ref);
  }

  clusterChanged(server: string): void {
    for (const [, e] of this.apps) if (!e.desired?.ok || e.desired.server === server) this.refresh(e.ref);
  }

  /** A new commit: the Applications reading that repository and revision are refreshed at once. */
  revisionChanged(change: RevisionChange): void {
    for (const [, e] of this.apps) {
      const app = e.desired?.application;
      if (!app || !readsRevision(app, change)) continue;
      if (e.desired?.ok && (e.desired.revisions ?? [e.desired.revision]).includes(change.sha)) continue;
      this.refresh(e.ref);
    }
  }

  /** A full resync of every Application now (desired state re-rendered, compared again). */
  resyncAll(): void {
    for (const [, e] of this.apps) this.refresh(e.ref);
  }

  /** Every Application compared again from the caches, nothing re-rendered. */
  compareAll(): void {
    this.markDirty(this.apps.keys());
  }

  stats(): { applications: number; informers: number; objects: number; synced: number } {
    let synced = 0;
    for (const p of this.published.values()) if (p.sync === 'Synced') synced++;
    return { applications: this.apps.size, synced, ...this.informers.stats() };
  }

  /** Whether nothing is waiting to be refreshed or compared. */
  idle(): boolean {
    return this.refreshQueue.size === 0 && this.refreshing === 0 && this.dirty.size === 0 && !this.pumping;
  }

  private resyncDue(): void {
    // 0: periodic refresh off (Argo CD's timeout.reconciliation: 0); events and pushes still refresh.
    if (this.options.resyncMs === 0) return;
    const now = Date.now();
    for (const [, e] of this.apps) if (e.nextResyncAt <= now) this.refresh(e.ref);
  }

  private startRefreshes(): void {
    const limit = this.options.refreshConcurrency ?? 32;
    while (this.refreshing < limit && this.refreshQueue.size > 0 && !this.stopped) {
      const key = this.refreshQueue.values().next().value!;
      this.refreshQueue.delete(key);
      this.refreshing++;
      const [namespace, ...rest] = key.split('/');
      const loaded = this.load({ namespace: namespace!, name: rest.join('/') })
        .catch((err: unknown) =>
          this.deps.logger.error({ err, application: key }, 'loading desired state failed'),
        )
        .finally(() => {
          this.loading.delete(loaded);
          this.refreshing--;
          this.startRefreshes();
        });
      this.loading.add(loaded);
    }
  }

  private async load(app: { namespace: string; name: string }): Promise<void> {
    const key = appKeyOf(app);
    let desired: DesiredState | DesiredFailure;
    const started = performance.now();
    try {
      desired = await loadDesired(this.deps, app);
    } catch (err) {
      // An unreachable cluster or repo service: Unknown, retried at the next resync.
      desired = { ok: false, application: undefined, specHash: '', message: (err as Error).message };
    }
    const server = desired.ok ? desired.server : (desired.application?.spec.destination.server ?? '');
    this.deps.metrics?.reconciled(app.namespace, server, (performance.now() - started) / 1000);
    if (this.stopped) return;
    if (!desired.ok && desired.application === undefined && desired.message.endsWith('not found')) {
      // Not (or no longer) in the read model.
      if (this.apps.has(key)) await this.forget(app);
      return;
    }
    const entry = this.apps.get(key) ?? {
      ref: app,
      informers: new Set<string>(),
      declared: [],
      nextResyncAt: 0,
    };
    this.apps.set(key, entry);
    entry.desired = desired;
    const jitter = this.options.resyncMs / 3;
    entry.nextResyncAt = Date.now() + this.options.resyncMs - Math.random() * jitter;
    this.install(key, entry);
    this.markDirty([key]);
  }

  /** The informers and index entries of the Application's current desired state. */
  private install(key: string, entry: AppEntry): void {
    const desired = entry.desired;
    const previous = { ...(entry.instance ? { instance: entry.instance } : {}), declared: entry.declared };
    const wanted = new Set<string>();
    const declared: string[] = [];
    if (desired?.ok) {
      for (const w of desired.watches)
        wanted.add(this.informers.acquire(w, desired.connection, desired.identity, key));
      for (const r of desired.resources)
        declared.push(objectKey(watchKeyText(r.watch), r.ref.namespace ?? '', r.ref.name));
    }
    const instance = desired?.ok ? desired.tracking.instance : undefined;
    this.index.setApplication(key, instance, declared, previous);
    entry.instance = instance;
    entry.declared = declared;
    this.release(
      key,
      [...entry.informers].filter((t) => !wanted.has(t)),
    );
    entry.informers = wanted;
  }

  private release(key: string, informers: Iterable<string>): void {
    for (const stopped of this.informers.release(key, informers)) this.index.dropInformer(stopped);
  }

  private observed(informer: string, obj: KubernetesObject, deleted: boolean): void {
    this.markDirty(this.index.observe(informer, obj, deleted));
  }

  private markDirty(apps: Iterable<string>): void {
    let any = false;
    for (const a of apps) {
      this.dirty.add(a);
      any = true;
    }
    if (any && !this.pumping && !this.stopped)
      this.pumping = this.pump().finally(() => {
        this.pumping = undefined;
        if (this.dirty.size > 0) this.markDirty([]);
      });
  }

  /** Compares every dirty Application, publishes the changed verdicts together, then automation. */
  private async pump(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    while (this.dirty.size > 0 && !this.stopped) {
      const batch = [...this.dirty];
      this.dirty.clear();
      const changes: StatusChange[] = [];
      const outOfSync: { key: string; entry: AppEntry; verdict: Verdict; fingerprint: string }[] = [];
      let compared = 0;
      for (const key of batch) {
        const entry = this.apps.get(key);
        const verdict = entry ? this.compare(entry) : undefined;
        if (!entry || !verdict) continue;
        compared++;
        const fingerprint = fingerprintOf(verdict);
        const previous = this.published.get(key);
        if (previous?.fingerprint !== fingerprint)
          changes.push({ app: entry.ref, verdict, fingerprint, previous, reconciledAt: new Date() });
        if (verdict.sync.status === 'OutOfSync') outOfSync.push({ key, entry, verdict, fingerprint });
        // Long passes yield now and then, so watch events and requests are not held up.
        if (compared % 100 === 0) await new Promise((r) => setImmediate(r));
      }
      await this.publish(changes);
      for (const o of outOfSync)
        if (o.entry.desired?.ok)
          await this.automation.consider(o.key, o.entry.ref, o.entry.desired, o.verdict, o.fingerprint);
      this.onPass?.(compared, changes.length);
    }
  }

  private async publish(changes: StatusChange[]): Promise<void> {
    try {
      const published = await publishChanges(this.deps.db, changes);
      changes.forEach((c, i) => this.published.set(appKeyOf(c.app), published[i]!));
    } catch (err) {
      // Another replica published in between, or the database is away: compared again shortly.
      this.deps.logger.warn({ err: (err as Error).message }, 'publishing status changes failed');
      this.published = await loadPublished(this.deps.db).catch(() => this.published);
      setTimeout(() => this.markDirty(changes.map((c) => appKeyOf(c.app))), 1_000);
    }
  }

  /** The verdict from the caches; undefined while an informer it reads has not listed yet. */
  private compare(entry: AppEntry): Verdict | undefined {
    const desired = entry.desired;
    if (!desired) return undefined;
    if (!desired.ok) return unknownVerdict(desired.message, desired.revision, desired.revisions);
    for (const t of entry.informers) {
      const s = this.informers.state(t);
      if (s.phase === 'pending') return undefined;
      if (s.phase === 'failed')
        return unknownVerdict(s.message ?? 'watch failed', desired.revision, desired.revisions);
    }
    return verdictOf({
      pairs: livePairs(desired, this.informers, this.index, entry.informers),
      revision: desired.revision,
      revisions: desired.revisions,
      ignore: desired.ignore,
      health: this.deps.health,
      fieldManager: FIELD_MANAGER,
      excluded: desired.excluded,
    });
  }
}
