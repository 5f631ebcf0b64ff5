// Group commit for the audit trail. The hash chain lets one writer per table extend it at a time,
// so concurrent syncs would queue for it one commit each; instead, rows handed in while a batch
// is committing go together in the next transaction. Each caller still waits until its own rows
// are committed (a decision is on record before its sync touches the cluster), and the order of
// rows per table is the order they were handed in.
import { appendAuditBatch, type AuditRow, type Kysely } from '@capstan/db';

type Table = 'sync_decisions' | 'resource_results';

interface Pending {
  table: Table;
  rows: AuditRow<Table>[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class AuditWriter {
  private queue: Pending[] = [];
  private draining = false;

  constructor(private readonly db: Kysely<unknown>) {}

  append<T extends Table>(table: T, rows: AuditRow<T>[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.queue.push({ table, rows: rows as AuditRow<Table>[], resolve, reject });
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
          await this.db.transaction().execute(async (trx) => {
            for (const table of ['sync_decisions', 'resource_results'] as const) {
              const rows = batch.filter((p) => p.table === table).flatMap((p) => p.rows);
              if (rows.length > 0) await appendAuditBatch(trx, table, rows as AuditRow<typeof table>[]);
            }
          });
          for (const p of batch) p.resolve();
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.draining = false;
    }
  }
}
