// Projections of the api's aggregates (projects, applications, clusters), the sync operations it
// learns from the sync service, sealed cluster credentials, and local accounts and tokens.
import { sql, type Kysely, type Migration } from 'kysely';

const S = 'api';

export const initialSchema: Migration = {
  async up(db: Kysely<unknown>) {
    const s = db.schema.withSchema(S);
    await s
      .createTable('projects')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('namespace', 'text', (c) => c.notNull())
      .addColumn('manifest', 'jsonb', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('uid', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await s
      .createTable('applications')
      .addColumn('namespace', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('project', 'text', (c) => c.notNull())
      .addColumn('manifest', 'jsonb', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('uid', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .addColumn('sync_status', 'text', (c) => c.notNull().defaultTo('Unknown'))
      .addColumn('health_status', 'text', (c) => c.notNull().defaultTo('Unknown'))
      .addColumn('operation_id', 'text')
      .addColumn('revision', 'text')
      .addColumn('reconciled_at', 'timestamptz')
      .addPrimaryKeyConstraint('applications_pk', ['namespace', 'name'])
      .execute();
    await sql`create index applications_project on ${sql.table(`${S}.applications`)} (project, namespace, name)`.execute(
      db,
    );
    await s
      .createTable('sync_operations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_namespace', 'text', (c) => c.notNull())
      .addColumn('app_name', 'text', (c) => c.notNull())
      .addColumn('project', 'text', (c) => c.notNull())
      .addColumn('phase', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('revision', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('dry_run', 'boolean', (c) => c.notNull())
      .addColumn('prune', 'boolean', (c) => c.notNull())
      .addColumn('initiated_by', 'text', (c) => c.notNull())
      .addColumn('requested_at', 'timestamptz', (c) => c.notNull())
      .addColumn('started_at', 'timestamptz')
      .addColumn('finished_at', 'timestamptz')
      .addColumn('identity', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('impersonated', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('resources', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
      .execute();
    await sql`create index sync_operations_app on ${sql.table(`${S}.sync_operations`)} (app_namespace, app_name, requested_at desc)`.execute(
      db,
    );
    await s
      .createTable('clusters')
      .addColumn('server', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('project', 'text')
      .addColumn('namespaces', 'jsonb', (c) => c.notNull())
      .addColumn('labels', 'jsonb', (c) => c.notNull())
      .addColumn('credential_type', 'text', (c) => c.notNull())
      .addColumn('insecure', 'boolean', (c) => c.notNull())
      .addColumn('server_name', 'text', (c) => c.notNull())
      .addColumn('has_ca_data', 'boolean', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('uid', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute();
    // Sealed with AES-256-GCM; the server URL is bound in as additional data.
    await s
      .createTable('cluster_credentials')
      .addColumn('server', 'text', (c) => c.primaryKey())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('nonce', 'bytea', (c) => c.notNull())
      .addColumn('ciphertext', 'bytea', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await s
      .createTable('accounts')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('password_hash', 'text')
      .addColumn('enabled', 'boolean', (c) => c.notNull())
      .addColumn('capabilities', 'jsonb', (c) => c.notNull())
      .addColumn('groups', 'jsonb', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('password_changed_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await s
      .createTable('api_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account', 'text', (c) => c.notNull().references(`${S}.accounts.name`).onDelete('cascade'))
      .addColumn('issued_at', 'timestamptz', (c) => c.notNull())
      .addColumn('expires_at', 'timestamptz')
      .execute();
    // Revoked token ids (logouts, deleted API tokens), kept until the token would have expired anyway.
    await s
      .createTable('revoked_tokens')
      .addColumn('jti', 'text', (c) => c.primaryKey())
      .addColumn('revoked_at', 'timestamptz', (c) => c.notNull())
      .addColumn('expires_at', 'timestamptz')
      .execute();
    // The token signing key when none is configured, sealed like cluster credentials.
    await s
      .createTable('signing_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('nonce', 'bytea', (c) => c.notNull())
      .addColumn('ciphertext', 'bytea', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute();
  },
};
