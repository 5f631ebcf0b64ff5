// Argo CD's status.conditions of an Application (DeletionError while a cascade deletion fails),
// written by the api's consumer of the sync service's deletion events.
import { sql, type Kysely, type Migration } from 'kysely';

export const applicationConditions: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table api.applications add column conditions jsonb not null default '[]'::jsonb`.execute(
      db,
    );
  },
};
