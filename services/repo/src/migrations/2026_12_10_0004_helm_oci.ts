// Argo CD's enableOCI and insecureOCIForceHttp of a Helm repository credential: its charts live in
// an OCI registry (reached over plain HTTP only when forced). Existing credentials keep false.
import type { Kysely, Migration } from 'kysely';

export const helmOci: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .withSchema('repo')
      .alterTable('credentials')
      .addColumn('enable_oci', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('insecure_oci_force_http', 'boolean', (c) => c.notNull().defaultTo(false))
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema
      .withSchema('repo')
      .alterTable('credentials')
      .dropColumn('enable_oci')
      .dropColumn('insecure_oci_force_http')
      .execute();
  },
};
