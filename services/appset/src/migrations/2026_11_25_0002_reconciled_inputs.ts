import { sql, type Kysely, type Migration } from 'kysely';

// appset.application_sets.reconciled_inputs: the reconciler's bookkeeping of the last successful
// reconcile (the fingerprint of its inputs and what to observe again to check it, reconcile/inputs.ts);
// null when there is none, or the last reconcile failed.
export const reconciledInputs: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table appset.application_sets add column reconciled_inputs jsonb`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`alter table appset.application_sets drop column reconciled_inputs`.execute(db);
  },
};
