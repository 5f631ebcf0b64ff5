// The latest version of each Argo CD configuration object applied through the api
// (io.capstan.settings.changed.v1): read at start, so a restarted sync service applies what was
// applied while it was down. Never a secret value (the events carry none).
import { sql, type Kysely, type Migration } from 'kysely';

export const appliedSettings: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table sync.applied_settings (
      object text primary key,
      version integer not null,
      data jsonb not null
    )`.execute(db);
  },
};
