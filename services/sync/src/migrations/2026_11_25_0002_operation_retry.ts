import type { Kysely, Migration } from 'kysely';

// syncPolicy.retry (operations/retry.ts): how many retries an operation has had, the attempt count
// when the last one was scheduled (the unreachable-cluster attempts are counted from there), and
// the Application as the failed attempt saw it (a retry stops when it changed).
export const operationRetry: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .withSchema('sync')
      .alterTable('operations')
      .addColumn('retries', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('retry_base', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('app_fingerprint', 'text')
      .execute();
  },
};
