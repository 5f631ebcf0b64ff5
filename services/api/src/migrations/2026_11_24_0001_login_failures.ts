// Failed logins per account and per source address (login throttling), shared by every api replica.
import { sql, type Kysely, type Migration } from 'kysely';

export const loginFailures: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .withSchema('api')
      .createTable('login_failures')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('fail_count', 'integer', (c) => c.notNull())
      .addColumn('last_failed', 'timestamptz', (c) => c.notNull())
      .execute();
    await sql`create index login_failures_last_failed on api.login_failures (last_failed)`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await db.schema.withSchema('api').dropTable('login_failures').execute();
  },
};
