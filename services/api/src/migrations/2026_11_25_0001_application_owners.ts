// The Applications an ApplicationSet owns are found by their owner references on every write and
// read of the set: a GIN index over metadata.ownerReferences keeps that an index lookup.
import { sql, type Kysely, type Migration } from 'kysely';

export const applicationOwners: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create index applications_owner_references on api.applications
      using gin ((manifest->'metadata'->'ownerReferences') jsonb_path_ops)`.execute(db);
  },
};
