// The outbox relay: publishes committed outbox rows to JetStream in order, with Nats-Msg-Id = event id,
// then deletes them. Killed at any point it loses nothing (a row stays until it is deleted) and
// duplicates nothing (the broker drops a re-published id inside its duplicate window; consumers are
// idempotent beyond it). One relay per schema is active at a time (advisory lock), so order holds
// when several replicas run.
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { Bus } from '../bus/bus.js';
import type { EventStoreDatabase } from './event-store.table.js';
import { outboxChannel } from './event-store.repository.js';

export interface OutboxRelayOptions<DB = EventStoreDatabase> {
  db: Kysely<DB>;
  /** For LISTEN: the relay wakes on commit instead of waiting for the next poll. */
  databaseUrl: string;
  schema: string;
  bus: Bus;
  batchSize?: number;
  /**
   * A safety poll besides the notifications (default 30 s): rows are published on commit, by the
   * LISTEN wake-up; while the LISTEN connection is down the relay polls every second instead.
   */
  pollIntervalMs?: number;
  onError?: (err: unknown) => void;
  /** Test seam: called after a batch is published and before its rows are deleted. */
  afterPublish?: (eventIds: readonly string[]) => Promise<void> | void;
}

/** How long flush waits for another holder of the relay lock before it gives up. */
const FLUSH_LOCK_WAIT_MS = 30_000;
const SAFETY_POLL_MS = 30_000;
/** The poll while no LISTEN connection is open (PostgreSQL restarting, a failover). */
const UNHEARD_POLL_MS = 1_000;

export interface OutboxRelay {
  /** Publishes until the outbox is empty, waiting for another holder of the lock (tests). */
  flush(): Promise<number>;
  stop(): Promise<void>;
}

export async function startOutboxRelay<DB>(options: OutboxRelayOptions<DB>): Promise<OutboxRelay> {
  const relay = new Relay(options as unknown as OutboxRelayOptions);
  await relay.listen();
  relay.start();
  return { flush: () => relay.flush(), stop: () => relay.stop() };
}

/** One relay: a LISTEN connection that wakes it, a loop that drains the outbox a batch at a time. */
class Relay {
  private readonly batchSize: number;
  private readonly lockKey: string;
  private listener: pg.Client | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  /** Rows may be waiting: set by a notification, a poll tick, or a failed round. */
  private dirty = true;
  private running: Promise<number> | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly options: OutboxRelayOptions) {
    this.batchSize = options.batchSize ?? 500;
    this.lockKey = `outbox-relay:${options.schema}`;
  }

  /**
   * Opens the LISTEN connection. When PostgreSQL drops it (a restart, a failover, a terminated
   * backend) a new one is opened with growing back-off; meanwhile the poll keeps rows moving, and
   * each new connection starts with a drain for what was committed while nobody listened.
   */
  async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl });
    client.on('error', (err) => this.options.onError?.(err));
    client.on('notification', () => {
      this.dirty = true;
      this.wake?.();
    });
    await client.connect();
    try {
      await client.query(`listen "${outboxChannel(this.options.schema)}"`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    client.once('end', () => {
      if (this.listener === client) this.listener = undefined;
      // The loop waits again with the short poll until a connection listens again.
      this.wake?.();
      this.reconnect(0);
    });
    this.listener = client;
  }

  private reconnect(attempt: number): void {
    if (this.stopping || this.reconnectTimer) return;
    const delay = Math.min(250 * 2 ** attempt, 5_000);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.stopping) return;
      this.listen().then(
        () => {
          this.dirty = true;
          this.wake?.();
        },
        (err: unknown) => {
          this.options.onError?.(err);
          this.reconnect(attempt + 1);
        },
      );
    }, delay);
    this.reconnectTimer.unref();
  }

  start(): void {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    const pollIntervalMs = this.options.pollIntervalMs ?? SAFETY_POLL_MS;
    while (!this.stopping) {
      if (this.dirty) {
        this.dirty = false;
        try {
          await this.drainOnce();
        } catch (err) {
          this.dirty = true;
          this.options.onError?.(err);
        }
      }
      if (this.stopping) break;
      // A notification that arrived while draining means there is more: go round again at once.
      if (this.dirty) continue;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        // Nothing is heard while the LISTEN connection is down: poll often until it is back.
        const wait = this.listener ? pollIntervalMs : Math.min(pollIntervalMs, UNHEARD_POLL_MS);
        setTimeout(() => {
          this.dirty = true;
          resolve();
        }, wait).unref();
      });
      this.wake = undefined;
    }
  }

  /** One round: returns how many rows it published, or -1 when another replica holds the lock. */
  private publishBatch(): Promise<number> {
    const { options, batchSize } = this;
    return options.db.transaction().execute(async (trx) => {
      const locked = await sql<{
        ok: boolean;
      }>`select pg_try_advisory_xact_lock(hashtext(${this.lockKey})) as ok`.execute(trx);
      if (!locked.rows[0]?.ok) return -1;
      const rows = await trx
        .withSchema(options.schema)
        .selectFrom('outbox')
        .select(['id', 'event_id', 'subject', 'payload'])
        .orderBy('id')
        .limit(batchSize)
        .execute();
      if (rows.length === 0) return 0;
      // Published concurrently on one connection: JetStream stores them in the order sent.
      await Promise.all(
        rows.map((r) =>
          options.bus.publishEncoded(`${options.bus.namespace}.${r.subject}`, r.event_id, r.payload),
        ),
      );
      await options.afterPublish?.(rows.map((r) => r.event_id));
      // Sent rows are deleted rather than flagged: the event store keeps the events, and an outbox that
      // only ever holds unsent rows stays small and fast to scan.
      await trx
        .withSchema(options.schema)
        .deleteFrom('outbox')
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
      return rows.length;
    });
  }

  /** Rows published, or -1 when another relay held the lock before anything was published. */
  private async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.publishBatch();
      if (n < 0) return total > 0 ? total : -1;
      total += n;
      // A short batch emptied the outbox as of its read: stop without an empty round trip. Rows
      // committed since then sent a notification, which brings the loop straight back.
      if (n < this.batchSize) return total;
    }
  }

  /** One drain at a time: a flush during the loop's drain waits for that one. */
  private drainOnce(): Promise<number> {
    this.running ??= this.drain().finally(() => (this.running = undefined));
    return this.running;
  }

  async flush(): Promise<number> {
    let total = 0;
    // Another holder of the lock (a replica, or the backend of a relay that was just killed and
    // that PostgreSQL has not reaped yet) is waited for, not mistaken for an empty outbox.
    const deadline = Date.now() + FLUSH_LOCK_WAIT_MS;
    for (;;) {
      const n = await this.drainOnce();
      if (n < 0) {
        if (Date.now() > deadline)
          throw new Error(`outbox relay of ${this.options.schema}: another relay holds the lock`);
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      total += n;
      if (n === 0) return total;
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.reconnectTimer);
    this.wake?.();
    await this.loop;
    await this.listener?.end();
  }
}
