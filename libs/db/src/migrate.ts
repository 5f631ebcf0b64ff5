// Each service migrates its own schema with kysely migrations at start-up (and via its `migrate`
// command). Migration names are timestamped (`2026_11_20_0001_outbox`) so they sort by creation.
// kysely's Migrator takes a PostgreSQL advisory lock, so replicas starting together are safe.
import { Migrator, sql, type Kysely, type Migration } from 'kysely';

export type Migrations = Record<string, Migration>;

export async function ensureSchema(db: Kysely<unknown>, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  } catch (err) {
    // Two replicas racing on `create schema if not exists` can still collide on the catalog's unique index.
    const code = (err as { code?: string }).code;
    if (code !== '23505' && code !== '42P06') throw err;
  }
}

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

export async function migrateToLatest<DB>(
  anyDb: Kysely<DB>,
  options: { schema: string; migrations: Migrations },
): Promise<string[]> {
  const db = anyDb as unknown as Kysely<unknown>;
  await ensureSchema(db, options.schema);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => options.migrations },
    migrationTableSchema: options.schema,
    migrationTableName: 'kysely_migration',
    migrationLockTableName: 'kysely_migration_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new MigrationError(`migration ${failed} of schema ${options.schema} failed`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
