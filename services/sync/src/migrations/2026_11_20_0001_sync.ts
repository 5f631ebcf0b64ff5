import { sql, type Kysely, type Migration } from 'kysely';

// The read model built from the api's events, the durable queue of sync operations, and what each
// Application applied last (for prune).
export const syncTables: Migration = {
  async up(db: Kysely<unknown>) {
    const s = db.schema.withSchema('sync');
    await s
      .createTable('projects')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('manifest', 'jsonb', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await s
      .createTable('applications')
      .addColumn('namespace', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('manifest', 'jsonb', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addPrimaryKeyConstraint('applications_pk', ['namespace', 'name'])
      .execute();
    await s
      .createTable('clusters')
      .addColumn('server', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('project', 'text')
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await s
      .createTable('operations')
      .addColumn('operation_id', 'text', (c) => c.primaryKey())
      .addColumn('app_namespace', 'text', (c) => c.notNull())
      .addColumn('app_name', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) =>
        c.notNull().check(sql`status in ('queued', 'running', 'succeeded', 'failed')`),
      )
      .addColumn('request', 'jsonb', (c) => c.notNull())
      .addColumn('trigger_event_id', 'text', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('correlation_id', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('not_before', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('lease_until', 'timestamptz')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('finished_at', 'timestamptz')
      .addColumn('reason', 'text')
      .execute();
    // One sync at a time per Application, across every replica.
    await sql`create unique index operations_one_running_per_app on sync.operations (app_namespace, app_name) where status = 'running'`.execute(
      db,
    );
    await sql`create index operations_runnable on sync.operations (not_before, created_at) where status in ('queued', 'running')`.execute(
      db,
    );
    // The claim's "nothing older or running for this Application" check.
    await sql`create index operations_active_by_app on sync.operations (app_namespace, app_name, created_at) where status in ('queued', 'running')`.execute(
      db,
    );
    await s
      .createTable('applied_resources')
      .addColumn('app_namespace', 'text', (c) => c.notNull())
      .addColumn('app_name', 'text', (c) => c.notNull())
      // The cluster they were applied to: after a change of destination, prune leaves them alone.
      .addColumn('server', 'text', (c) => c.notNull())
      .addColumn('api_version', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('namespace', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('applied_resources_pk', [
        'app_namespace',
        'app_name',
        'server',
        'api_version',
        'kind',
        'namespace',
        'name',
      ])
      .execute();
  },
};
