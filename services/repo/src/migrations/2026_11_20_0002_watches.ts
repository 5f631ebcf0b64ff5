import { sql, type Kysely, type Migration } from 'kysely';

export const watches: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .withSchema('repo')
      .createTable('watches')
      .addColumn('repo_url', 'text', (c) => c.notNull())
      .addColumn('normalized_url', 'text', (c) => c.notNull())
      .addColumn('revision', 'text', (c) => c.notNull())
      .addColumn('project', 'text', (c) => c.notNull())
      .addColumn('last_sha', 'text')
      .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('checked_at', 'timestamptz')
      .addPrimaryKeyConstraint('watches_pk', ['normalized_url', 'revision', 'project'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.withSchema('repo').dropTable('watches').execute();
  },
};
