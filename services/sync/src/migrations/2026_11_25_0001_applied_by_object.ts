import { sql, type Kysely, type Migration } from 'kysely';

// Which Applications applied an object (a sync's shared-resource check, apply/ownership.ts): by
// object, not by Application as the primary key orders them.
export const appliedByObject: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create index applied_resources_by_object on sync.applied_resources (server, kind, namespace, name)`.execute(
      db,
    );
  },
};
