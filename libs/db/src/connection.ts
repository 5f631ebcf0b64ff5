// kysely over node-postgres. Every service gets one pool; schemas keep services apart.
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';

// int8 (bigserial ids, counts) as JavaScript numbers: Capstan's sequences stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface DbOptions {
  /** Pool size; a service needs few connections, benchmarks more. */
  max?: number;
  applicationName?: string;
}

export function createDb<DB>(connectionString: string, options: DbOptions = {}): Kysely<DB> {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    // Longer than the services' safety polls (30 s): a pool at rest keeps its connection rather
    // than opening one (a backend, an authentication) for every poll, as node-postgres's 10 s did.
    idleTimeoutMillis: 60_000,
    application_name: options.applicationName ?? 'capstan',
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor may a checked-out client between two queries (a transaction awaiting other work when the
  // database crashes): without a listener its 'error' event killed the process (found by the fault
  // suite, test/faults). Its next query fails instead, and the caller's error path takes over.
  pool.on('connect', (client) => void client.on('error', () => undefined));
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

/** Readiness probe: the database answers. */
export async function pingDb<DB>(db: Kysely<DB>): Promise<boolean> {
  await sql`select 1`.execute(db);
  return true;
}
