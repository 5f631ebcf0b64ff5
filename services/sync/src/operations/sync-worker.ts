// Triggers and the worker pool. The intake consumer turns each sync request command into a queued
// operation (once per operationId, so redelivery is harmless) and acks; `parallelism` workers claim
// operations from PostgreSQL (one running per Application, across replicas), run them while
// renewing their lease, and finish them with exactly one terminal event. Operations left running by
// a replica that died are taken over when their lease expires.
import { syncRequest, type Bus, type DeadLetterStore, type RunningConsumer } from '@capstan/events';
import type { SyncDb } from '../sync.table.js';
import {
  claimOperation,
  enqueueOperation,
  nextDueMs,
  renewLease,
  type ClaimedOperation,
} from './operations.repository.js';
import { runOperation, type SyncRunnerDeps } from './sync-runner.js';
import { isDeletionRequest, runDeletion } from './deletion-runner.js';

export const INTAKE_CONSUMER = 'sync-requests';

export interface SyncWorkers {
  /** Wakes idle workers: `count` operations were queued (default 1). */
  wake(count?: number): void;
  stop(): Promise<void>;
}

export function startIntake(
  db: SyncDb,
  bus: Bus,
  workers: Pick<SyncWorkers, 'wake'>,
  options: { deadLetters?: DeadLetterStore } = {},
): Promise<RunningConsumer> {
  return bus.consume({
    durable: INTAKE_CONSUMER,
    events: [syncRequest],
    handle: async (event) => {
      const { data } = event;
      const queued = await enqueueOperation(db, {
        operationId: data.operationId,
        appNamespace: data.application.namespace,
        appName: data.application.name,
        request: data,
        triggerEventId: event.id,
        actor: event.actor,
        correlationId: event.correlationid ?? null,
      });
      if (queued) workers.wake();
    },
    ...(options.deadLetters ? { deadLetters: options.deadLetters } : {}),
  });
}

export function startWorkers(
  deps: SyncRunnerDeps,
  options: {
    parallelism: number;
    leaseMs: number;
    /**
     * The longest the polling idle worker waits (default 5 s): workers are woken when an operation
     * is queued here, when one is claimed or finishes, and when a retry or a lease falls due.
     */
    pollMs?: number;
    /** Told when an operation of an Application finished here (the reconciler looks again). */
    onFinished?: (app: { namespace: string; name: string }) => void;
  },
): SyncWorkers {
  let stopping = false;
  const sleepers = new Set<() => void>();
  // Wakes as many idle workers as there is new work (not all of them: they would only race for it).
  const wake = (count = 1) => {
    for (const s of [...sleepers].slice(0, count)) s();
  };
  /** Until woken, or `ms` have passed when given. */
  const sleep = (ms?: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      sleepers.add(done);
    });
  // One idle worker polls (for retries and leases falling due, and for what other replicas queued);
  // the other idle ones wait to be woken.
  let poller: number | undefined;

  const loop = async (worker: number) => {
    while (!stopping) {
      let op: ClaimedOperation | undefined;
      try {
        op = await claimOperation(deps.db, options.leaseMs);
      } catch (err) {
        deps.logger.error({ err, worker }, 'claiming a sync operation failed');
        await sleep(1_000);
        continue;
      }
      if (!op) {
        if (poller !== undefined && poller !== worker) {
          await sleep();
          continue;
        }
        poller = worker;
        await sleep(await idleWait(deps.db, options.pollMs ?? IDLE_POLL_MS));
        poller = undefined;
        continue;
      }
      // Busy now: an idle worker looks for more (a burst queued by another replica fans out) and
      // polls while this one syncs.
      wake();
      const claimed = op;
      const renew = heartbeat(deps, claimed, options.leaseMs);
      try {
        // One queue, two kinds of operation: a cascade deletion has its own runner.
        if (isDeletionRequest(claimed.request)) await runDeletion(deps, claimed);
        else await runOperation(deps, claimed);
      } catch (err) {
        // The database went away mid-sync: the lease expires and the operation is retried.
        deps.logger.error({ err, operationId: claimed.operationId }, 'sync attempt aborted');
        await sleep(1_000);
      } finally {
        renew.stop();
        options.onFinished?.({ namespace: claimed.appNamespace, name: claimed.appName });
      }
      // This one claims again at once; an idle one is woken too, for the next operation of this
      // Application, which could not be claimed while this one ran (this one may pick another).
      wake();
    }
  };

  const loops = Array.from({ length: options.parallelism }, (_, i) => loop(i));
  return {
    wake,
    async stop() {
      stopping = true;
      wake(sleepers.size);
      await Promise.all(loops);
    },
  };
}

/** Also how soon an operation queued by a replica whose workers are all busy is run by another. */
const IDLE_POLL_MS = 5_000;

/** How long an idle worker sleeps: until the next retry or lease falls due, at most `pollMs`. */
async function idleWait(db: SyncDb, pollMs: number): Promise<number> {
  try {
    const due = await nextDueMs(db);
    if (due === undefined) return pollMs;
    // Due already, yet not claimed (another replica raced for it): look again in a second, as
    // before. Due later: a margin past it, so the claim (by the database's clock) finds it due.
    return Math.min(pollMs, due > 0 ? due + 50 : 1_000);
  } catch {
    return Math.min(pollMs, 1_000);
  }
}

/**
 * Renews a claimed operation's lease every third of it while its sync runs, so the lease can be
 * short: a replica killed mid-sync stops renewing and another takes the operation over within one
 * lease. A renewal that finds the operation no longer ours (the lease ran out while this replica
 * was cut off from the database, and another took over) says so once: the attempt's terminal
 * write is refused anyway (finishOperation checks the attempt), so nothing is recorded twice.
 */
function heartbeat(deps: SyncRunnerDeps, op: ClaimedOperation, leaseMs: number): { stop(): void } {
  let lost = false;
  const timer = setInterval(
    () => {
      renewLease(deps.db, op, leaseMs).then(
        (ours) => {
          if (!ours && !lost) {
            lost = true;
            deps.logger.warn(
              { operationId: op.operationId, attempt: op.attempt },
              'sync lease lost: another replica took the operation over',
            );
          }
        },
        (err: unknown) => deps.logger.warn({ err, operationId: op.operationId }, 'lease renewal failed'),
      );
    },
    Math.max(1_000, leaseMs / 3),
  );
  return { stop: () => clearInterval(timer) };
}
