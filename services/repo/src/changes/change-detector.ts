// Change detection: every watched source is re-resolved on a timer (polling) and at once when
// another system announces a push on its URL (io.capstan.ext.git.push.v1; when the announcement names
// the target revisions it may move, as the api's git webhook does, only those). A source whose commit
// moved gets a revision-changed event, appended with its read-model update in one transaction and
// published by the outbox relay.
import type { Kysely } from 'kysely';
import {
  causedBy,
  handleCommand,
  type Envelope,
  type EventStoreDatabase,
  type EventOf,
  type gitPush,
} from '@capstan/events';
import type { Logger } from '@capstan/service';
import type { CheckoutStore } from '../checkouts/checkout-store.js';
import type { CredentialService } from '../credentials/credential-service.js';
import type { RepoDatabase } from '../credentials/credential.table.js';
import type { RepoDb } from '../credentials/credential.repository.js';
import {
  decideWatch,
  evolveWatch,
  initialWatchState,
  watchStreamId,
  type RevisionChanged,
  type WatchKey,
} from './revision-watch.js';
import { listWatches, recordWatchSha } from './watch.repository.js';

export type GitPush = EventOf<typeof gitPush>;

/** A target revision's comparison form: an empty one is HEAD. */
const sameRevision = (r: string) => (r.trim() === '' ? 'HEAD' : r.trim());

export interface ChangeDetectorDeps {
  db: Kysely<RepoDatabase & EventStoreDatabase>;
  schema: string;
  credentials: CredentialService;
  checkouts: CheckoutStore;
  logger: Logger;
}

export interface CheckSummary {
  checked: number;
  changed: number;
  failed: number;
}

export class ChangeDetector {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<CheckSummary> | null = null;

  constructor(private readonly deps: ChangeDetectorDeps) {}

  /** Re-checks every watch (or those of one URL); failures of one source do not stop the others. */
  async check(options: {
    repoURL?: string;
    /** Only the watches of these target revisions ('' and HEAD are one); absent: all. */
    revisions?: readonly string[];
    detectedBy: 'poll' | 'push';
    cause?: Envelope;
  }): Promise<CheckSummary> {
    const all = await listWatches(
      this.deps.db as unknown as RepoDb,
      options.repoURL ? { repoURL: options.repoURL } : {},
    );
    const wanted = options.revisions ? new Set(options.revisions.map(sameRevision)) : undefined;
    const watches = wanted ? all.filter((w) => wanted.has(sameRevision(w.revision))) : all;
    const summary: CheckSummary = { checked: 0, changed: 0, failed: 0 };
    const forgotten = new Set<string>();
    for (const watch of watches) {
      summary.checked += 1;
      try {
        if (!forgotten.has(watch.repoURL)) {
          this.deps.checkouts.forgetRevisions(watch.repoURL);
          forgotten.add(watch.repoURL);
        }
        const lookup = await this.deps.credentials.lookupForApplication(
          { url: watch.repoURL, project: watch.project, application: null },
          { actor: 'service:repo' },
        );
        const [sha] = await Promise.all([
          this.deps.checkouts.resolveRevision({
            url: watch.repoURL,
            revision: watch.revision,
            credential: lookup.credential,
          }),
          lookup.recorded,
        ]);
        const events = await this.observe(watch, sha, options.detectedBy, options.cause);
        summary.changed += events.length;
      } catch (err) {
        summary.failed += 1;
        this.deps.logger.warn(
          { err, repoURL: watch.repoURL, revision: watch.revision, project: watch.project },
          'change check failed',
        );
      }
    }
    return summary;
  }

  /** Handles one push announcement from the bus. */
  async onPush(push: GitPush): Promise<void> {
    await this.check({
      repoURL: push.data.repoURL,
      ...(push.data.revisions ? { revisions: push.data.revisions } : {}),
      detectedBy: 'push',
      cause: push,
    });
  }

  /** Starts polling every `intervalMs` (0 disables); rounds never overlap. */
  startPolling(intervalMs: number): void {
    if (intervalMs <= 0) return;
    const tick = () => {
      if (this.running) return;
      this.running = this.check({ detectedBy: 'poll' }).finally(() => (this.running = null));
    };
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  private async observe(
    key: WatchKey,
    sha: string,
    detectedBy: 'poll' | 'push',
    cause?: Envelope,
  ): Promise<RevisionChanged[]> {
    const meta = { actor: cause?.actor ?? 'service:repo', ...(cause ? causedBy(cause) : {}) };
    const result = await handleCommand<ReturnType<typeof initialWatchState>, RevisionChanged>(
      this.deps.db as unknown as Kysely<EventStoreDatabase>,
      {
        schema: this.deps.schema,
        streamId: watchStreamId(key),
        initialState: initialWatchState,
        evolve: evolveWatch,
        decide: (state) => decideWatch(state, { key, sha, detectedBy }, meta),
        project: async (trx) => {
          await recordWatchSha(trx as unknown as RepoDb, key, sha);
        },
      },
    );
    return result.events;
  }
}
