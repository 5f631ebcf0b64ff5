import { sql, type Kysely, type Migration } from 'kysely';

// The reconciler's last published verdict per Application (reconcile/status.repository.ts): a
// restart compares against it and republishes nothing that did not change.
export const reconcileStatus: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .withSchema('sync')
      .createTable('reconcile_status')
      .addColumn('app_namespace', 'text', (c) => c.notNull())
      .addColumn('app_name', 'text', (c) => c.notNull())
      // The version of the Application's status stream (application-status/<ns>/<name>).
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('sync_status', 'text', (c) => c.notNull())
      .addColumn('health_status', 'text', (c) => c.notNull())
      .addColumn('reconciled_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addPrimaryKeyConstraint('reconcile_status_pk', ['app_namespace', 'app_name'])
      .execute();
  },
};
