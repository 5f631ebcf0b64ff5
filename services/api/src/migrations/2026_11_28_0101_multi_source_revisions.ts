// Argo CD's multiple sources: a multi-source Application's status.sync.revisions (one commit per
// source, from the reconciler) and, per sync operation, the revisions it synced and the sources it
// deployed (operationState.syncResult.revisions/sources, status.history[].revisions/sources).
import { sql, type Kysely, type Migration } from 'kysely';

export const multiSourceRevisions: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table api.applications add column revisions jsonb not null default '[]'::jsonb`.execute(
      db,
    );
    await sql`alter table api.sync_operations
      add column revisions jsonb not null default '[]'::jsonb,
      add column sources jsonb`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`alter table api.sync_operations drop column revisions, drop column sources`.execute(db);
    await sql`alter table api.applications drop column revisions`.execute(db);
  },
};
