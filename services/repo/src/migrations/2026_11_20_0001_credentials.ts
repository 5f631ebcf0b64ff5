import { sql, type Kysely, type Migration } from 'kysely';

export const credentials: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .withSchema('repo')
      .createTable('credentials')
      .addColumn('seq', 'bigserial', (c) => c.notNull().unique())
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('normalized_url', 'text', (c) => c.notNull())
      // '' = unscoped; a URL has at most one credential per scope.
      .addColumn('project', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('git', 'helm')`))
      .addColumn('display_name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('username', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('insecure', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('has_password', 'boolean', (c) => c.notNull())
      .addColumn('has_ssh_private_key', 'boolean', (c) => c.notNull())
      .addColumn('origin', 'text', (c) => c.notNull().check(sql`origin in ('api', 'declarative')`))
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('nonce', 'bytea', (c) => c.notNull())
      .addColumn('ciphertext', 'bytea', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addUniqueConstraint('credentials_url_project_unique', ['normalized_url', 'project'])
      .execute();
    await db.schema
      .withSchema('repo')
      .createIndex('credentials_project_idx')
      .on('credentials')
      .columns(['project', 'seq'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.withSchema('repo').dropTable('credentials').execute();
  },
};
