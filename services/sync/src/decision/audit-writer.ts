// Group commit for the audit trail. The hash chain lets one writer per table extend it at a time,
// so concurrent syncs would queue for it one commit each; instead, rows handed in while a batch
// is committing go together in the next transaction. Each caller still waits until its own rows
// are committed (a decision is on record before its sync touches the cluster), and the order of
// rows per table is the order they were handed in.
//
// A caller may hand in work of its own for the same transaction (the runner's `sync.started` event
// with its decision; the operation's terminal state and events with its last results), so a sync
// costs two commits shared with every other sync in flight instead of several of its own. That
// work runs before the audit rows are appended, so the chain's lock is held only for the appends.
// When a batch fails, each of its callers is retried in a transaction of its own: one bad row or
// one lost operation fails only its own caller.
import { appendAuditBatch, type AuditRow, type Kysely, type Transaction } from '@capstan/db';

type Table = 'sync_decisions' | 'resource_results';

/** Work committed in the same transaction as the caller's audit rows. */
export type AuditWork<R> = (trx: Transaction<unknown>) => Promise<R>;

interface Pending {
  table: Table;
  rows: AuditRow<Table>[];
  work: AuditWork<unknown> | undefined;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class AuditWriter {
  private queue: Pending[] = [];
  private draining = false;

  constructor(private readonly db: Kysely<unknown>) {}

  append<T extends Table>(table: T, rows: AuditRow<T>[]): Promise<void>;
  append<T extends Table, R>(table: T, rows: AuditRow<T>[], work: AuditWork<R>): Promise<R>;
  append<T extends Table, R>(table: T, rows: AuditRow<T>[], work?: AuditWork<R>): Promise<R | void> {
    if (rows.length === 0 && !work) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.queue.push({
        table,
        rows: rows as AuditRow<Table>[],
        work,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        try {
          const results = await this.commit(batch);
          batch.forEach((p, i) => p.resolve(results[i]));
        } catch (err) {
          if (batch.length === 1) {
            batch[0]!.reject(err);
            continue;
          }
          for (const p of batch) {
            try {
              p.resolve((await this.commit([p]))[0]);
            } catch (own) {
              p.reject(own);
            }
          }
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private commit(batch: Pending[]): Promise<unknown[]> {
    return this.db.transaction().execute(async (trx) => {
      const results: unknown[] = [];
      for (const p of batch) results.push(p.work ? await p.work(trx) : undefined);
      // Tables in a fixed order, so that two writers never wait for each other's chain lock.
      for (const table of ['sync_decisions', 'resource_results'] as const) {
        const rows = batch.filter((p) => p.table === table).flatMap((p) => p.rows);
        if (rows.length > 0) await appendAuditBatch(trx, table, rows as AuditRow<typeof table>[]);
      }
      return results;
    });
  }
}
