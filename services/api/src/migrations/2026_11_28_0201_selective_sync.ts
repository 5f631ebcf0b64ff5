// A selective sync (Argo CD's SyncOperation.resources): the resources the operation was asked to
// sync, shown in operationState.operation.sync.resources; such an operation gets no history id
// (Argo CD records only full syncs in status.history).
import { sql, type Kysely, type Migration } from 'kysely';

export const selectiveSync: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table api.sync_operations
      add column sync_resources jsonb not null default '[]'::jsonb`.execute(db);
  },
};
