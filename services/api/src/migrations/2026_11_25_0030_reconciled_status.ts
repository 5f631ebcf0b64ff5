// The status the sync service's reconciler observes (io.capstan.sync.status-changed.v1): the health
// message and the per-resource statuses of an Application; and what the api records of every sync
// operation whoever started it: its trigger, its attempt, the source it deployed and, for a
// successful deployment, its id in Argo CD's status.history (0, 1, 2, ... per Application).
import { sql, type Kysely, type Migration } from 'kysely';

export const reconciledStatus: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table api.applications
      add column health_message text not null default '',
      add column resources jsonb not null default '[]'::jsonb`.execute(db);
    await sql`alter table api.sync_operations
      add column trigger text not null default 'user',
      add column attempt integer not null default 1,
      add column source jsonb,
      add column history_id bigint`.execute(db);
    await sql`create unique index sync_operations_history on api.sync_operations (app_namespace, app_name, history_id)
      where history_id is not null`.execute(db);
  },
};
