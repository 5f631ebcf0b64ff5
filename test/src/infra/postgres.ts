// A real PostgreSQL for tests. DATABASE_URL (as on the project's machines, where PostgreSQL runs on
// loopback) names the server; without it, testcontainers starts one where Docker is present, and
// otherwise the local default is used. Every call creates a fresh database so test files run in
// parallel without seeing each other's schemas or audit rows.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dockerAvailable } from './docker.js';

const LOCAL_DEFAULT = 'postgres://postgres@127.0.0.1:5432/postgres';

let serverUrl: Promise<string> | undefined;

async function startContainer(): Promise<string> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer('postgres:16-alpine').start();
  return container.getConnectionUri();
}

/** The admin URL of the PostgreSQL server tests use. */
export function postgresServerUrl(): Promise<string> {
  serverUrl ??= (async () => {
    if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
    if (!process.env.CAPSTAN_NO_TESTCONTAINERS && dockerAvailable()) return startContainer();
    return LOCAL_DEFAULT;
  })();
  return serverUrl;
}

export interface TestDatabase {
  /** Connection URL of the fresh database. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function createTestDatabase(prefix = 'capstan_test'): Promise<TestDatabase> {
  const admin = await postgresServerUrl();
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
  return {
    url: withDatabase(admin, name),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
