// Owners the api recorded for resources a service reconciles in the background (an ApplicationSet
// of appset): the only users an owner delegation may name.
import type { Kysely, Migration } from 'kysely';

export const delegationGrants: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .withSchema('api')
      .createTable('delegation_grants')
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('resource', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('recorded_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('delegation_grants_pk', ['holder', 'resource'])
      .execute();
  },
};
