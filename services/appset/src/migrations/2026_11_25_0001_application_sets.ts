import { sql, type Kysely, type Migration } from 'kysely';

// appset.application_sets: the read model of the set streams (manifest, status, version), plus the
// reconciler's bookkeeping, which is scheduling state rather than domain state: the repositories
// the set's git generators read and whether it reads the cluster registry (the triggers), its requeue
// interval and when it is due next.
export const applicationSets: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .withSchema('appset')
      .createTable('application_sets')
      .addColumn('namespace', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('uid', 'text', (c) => c.notNull())
      .addColumn('manifest', 'jsonb', (c) => c.notNull())
      .addColumn('labels', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .addColumn('status', 'jsonb', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .addColumn('git_repos', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
      .addColumn('reads_clusters', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('requeue_seconds', 'integer', (c) => c.notNull())
      .addColumn('next_reconcile_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('application_sets_pk', ['namespace', 'name'])
      .execute();
    await db.schema
      .withSchema('appset')
      .createIndex('application_sets_due')
      .on('application_sets')
      .column('next_reconcile_at')
      .execute();
    await sql`create index application_sets_git_repos on appset.application_sets using gin (git_repos)`.execute(
      db,
    );
  },
  async down(db: Kysely<unknown>) {
    await db.schema.withSchema('appset').dropTable('application_sets').execute();
  },
};
