// Live state through watches: one informer (client-node's ListWatch) per WatchKey — cluster,
// identity, namespace or cluster scope, resource — created when the first Application needs it,
// shared by every Application with the same key, stopped when the last one lets go. Every list and
// watch goes through a KubeConfig built by kubeConfigFor for the Application's resolved identity
// (Impersonate-User on every request), exactly as a sync's client: a list or watch the ServiceAccount
// may not do fails as that ServiceAccount, is reported (the Applications concerned become Unknown)
// and is retried later with backoff as the same identity, never as the control plane.
//
// Memory: the informer keeps each live object as the API server sends it — the comparison needs
// its spec/data, status (health) and managedFields (the diff's field ownership and
// managedFieldsManagers). Roughly the object's JSON size × 2–3 in V8 (bench/results/reconcile.json
// measures it per 1,000 objects).
import {
  ListWatch,
  VersionApi,
  Watch,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from '@capstan/service';
import { kubeConfigFor, type ClusterConnection, type SyncIdentity } from '../kube/kube-config.js';
import { connectionDigest } from '../kube/target-cluster-pool.js';
import { apiVersionOf, collectionPath, forbiddenMessage, watchKeyText, type WatchKey } from './watch-key.js';
import { listCollection, ListError } from './raw-list.js';

export type InformerPhase = 'pending' | 'ready' | 'failed';

export interface InformerState {
  phase: InformerPhase;
  message?: string;
}

interface Entry {
  key: WatchKey;
  informer: ListWatch<KubernetesObject>;
  users: Set<string>;
  state: InformerState;
  failures: number;
  retry?: NodeJS.Timeout;
  stopped: boolean;
}

export interface InformerEvents {
  /** A live object was added, changed or deleted (deleted: the last state seen). */
  changed(key: string, obj: KubernetesObject, deleted: boolean): void;
  /** An informer became ready or failed: its users must look again. */
  stateChanged(key: string, users: ReadonlySet<string>): void;
}

const RETRY_BASE_MS = 1_000;
const RETRY_CAP_MS = 300_000;

export interface ClusterCacheStats {
  resources: number;
  objects: number;
  /** The cluster's Kubernetes version (gitVersion), '' until known. */
  version: string;
}

export class InformerRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly configs = new Map<string, KubeConfig>();
  /** Kubernetes version per cluster server ('' until known). */
  private readonly versions = new Map<string, string>();

  constructor(
    private readonly events: InformerEvents,
    private readonly logger: Logger,
    private readonly requestTimeoutMs = 60_000,
  ) {}

  /** Makes `user` (an Application) a user of the informer for `key`, starting it if new. */
  acquire(key: WatchKey, conn: ClusterConnection, identity: SyncIdentity, user: string): string {
    const text = watchKeyText(key);
    const existing = this.entries.get(text);
    if (existing) {
      existing.users.add(user);
      return text;
    }
    const kc = this.configFor(conn, identity);
    const path = collectionPath(key);
    const typeMeta = { apiVersion: apiVersionOf(key), kind: key.kind };
    // Ready once the watch is established (after the list, whose objects are then in the cache):
    // a list that succeeds followed by a watch that is refused is not a moment of truth.
    const informer = new ListWatch<KubernetesObject>(
      path,
      new NotifyingWatch(kc, () => this.watching(text)),
      () => listCollection(kc, path, typeMeta, this.requestTimeoutMs),
      false,
    );
    const entry: Entry = {
      key,
      informer,
      users: new Set([user]),
      state: { phase: 'pending' },
      failures: 0,
      stopped: false,
    };
    this.entries.set(text, entry);
    const changed = (obj: KubernetesObject) => this.events.changed(text, obj, false);
    informer.on('add', changed);
    informer.on('update', changed);
    informer.on('delete', (obj) => this.events.changed(text, obj, true));
    informer.on('error', (err: unknown) => this.failed(text, entry, identityName(identity), err));
    void informer.start();
    return text;
  }

  /** `user` no longer needs these informers; those nobody needs are stopped (and returned). */
  release(user: string, keys: Iterable<string>): string[] {
    const stopped: string[] = [];
    for (const text of keys) {
      const entry = this.entries.get(text);
      if (!entry) continue;
      entry.users.delete(user);
      if (entry.users.size > 0) continue;
      this.stopEntry(text, entry);
      stopped.push(text);
    }
    return stopped;
  }

  state(text: string): InformerState {
    return this.entries.get(text)?.state ?? { phase: 'pending' };
  }

  get(text: string, namespace: string, name: string): KubernetesObject | undefined {
    const entry = this.entries.get(text);
    return entry?.state.phase === 'ready' ? entry.informer.get(name, namespace || undefined) : undefined;
  }

  list(text: string): readonly KubernetesObject[] {
    const entry = this.entries.get(text);
    return entry?.state.phase === 'ready' ? entry.informer.list() : [];
  }

  stats(): { informers: number; objects: number } {
    let objects = 0;
    for (const e of this.entries.values()) objects += e.informer.list().length;
    return { informers: this.entries.size, objects };
  }

  /** Per cluster server: API resources watched (group/version/resource), objects in the caches, version. */
  statsByServer(): Map<string, ClusterCacheStats> {
    const seen = new Map<string, { resources: Set<string>; objects: number }>();
    for (const e of this.entries.values()) {
      const s = seen.get(e.key.server) ?? { resources: new Set<string>(), objects: 0 };
      s.resources.add(`${e.key.group}/${e.key.version}/${e.key.resource}`);
      s.objects += e.informer.list().length;
      seen.set(e.key.server, s);
    }
    return new Map(
      [...seen].map(([server, s]) => [
        server,
        { resources: s.resources.size, objects: s.objects, version: this.versions.get(server) ?? '' },
      ]),
    );
  }

  async stop(): Promise<void> {
    for (const [text, entry] of [...this.entries]) this.stopEntry(text, entry);
  }

  private stopEntry(text: string, entry: Entry): void {
    entry.stopped = true;
    clearTimeout(entry.retry);
    void entry.informer.stop();
    this.entries.delete(text);
  }

  private watching(text: string): void {
    const entry = this.entries.get(text);
    if (!entry || entry.stopped) return;
    entry.failures = 0;
    if (entry.state.phase === 'ready') return;
    entry.state = { phase: 'ready' };
    this.events.stateChanged(text, entry.users);
  }

  private failed(text: string, entry: Entry, identity: string, err: unknown): void {
    if (entry.stopped) return;
    const code =
      (err as { code?: unknown; statusCode?: unknown }).code ?? (err as { statusCode?: unknown }).statusCode;
    const verb = err instanceof ListError ? err.verb : 'watch';
    const detail = err instanceof Error ? err.message : String(err);
    const message =
      code === 403 || code === 401
        ? forbiddenMessage(entry.key, identity, verb, detail)
        : `${verb} of ${entry.key.resource}${entry.key.namespace ? ` in namespace "${entry.key.namespace}"` : ''} as ${identity} failed: ${detail}`;
    entry.failures++;
    const delay = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** (entry.failures - 1));
    const jittered = Math.round(delay * (0.8 + Math.random() * 0.4));
    this.logger.warn(
      { informer: entry.key, message, retryInMs: jittered },
      'watch failed: retried as the same identity',
    );
    const before = entry.state;
    entry.state = { phase: 'failed', message };
    entry.retry = setTimeout(() => {
      entry.retry = undefined;
      if (!entry.stopped) void entry.informer.start();
    }, jittered);
    if (before.phase !== 'failed' || before.message !== message) this.events.stateChanged(text, entry.users);
  }

  /** One KubeConfig per (cluster credentials, identity): its agent carries every watch of that identity. */
  private configFor(conn: ClusterConnection, identity: SyncIdentity): KubeConfig {
    const digest = `${identityName(identity)}\u0000${connectionDigest(conn)}`;
    let kc = this.configs.get(digest);
    if (!kc) {
      kc = kubeConfigFor(conn, identity, { maxSockets: Infinity });
      this.configs.set(digest, kc);
      this.learnVersion(conn.server, kc);
    }
    return kc;
  }

  /** The cluster's Kubernetes version (GET /version, which every authenticated identity may read), once. */
  private learnVersion(server: string, kc: KubeConfig): void {
    if (this.versions.has(server)) return;
    this.versions.set(server, '');
    kc.makeApiClient(VersionApi)
      .getCode()
      .then(
        (v) => this.versions.set(server, v.gitVersion),
        () => this.versions.delete(server),
      );
  }
}

/** client-node's Watch, telling when a watch request was answered 200 (the watch is established). */
class NotifyingWatch extends Watch {
  constructor(
    kc: KubeConfig,
    private readonly established: () => void,
  ) {
    super(kc);
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    let failed = false;
    const controller = await super.watch(path, queryParams, callback, (err: unknown) => {
      if (err) failed = true;
      done(err);
    });
    if (!failed) this.established();
    return controller;
  }
}

export function identityName(identity: SyncIdentity): string {
  return identity.kind === 'service-account' ? identity.username : 'the control-plane credentials';
}
