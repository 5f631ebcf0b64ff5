// isDatabaseOutage against errors a real PostgreSQL and node-postgres give: a server not there, a
// session the server ends (admin_shutdown, as a restart or failover does), the pool's lost connection
// wrapped by a caller; and answers about the data, which are not outages.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@capstan/test/infra';
import { isDatabaseOutage } from './outage.js';

const caught = async (work: () => Promise<unknown>): Promise<unknown> => {
  try {
    await work();
  } catch (err) {
    return err;
  }
  throw new Error('expected the work to fail');
};

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

describe('isDatabaseOutage', () => {
  let db: TestDatabase;
  beforeAll(async () => void (db = await createTestDatabase('capstan_outage')));
  afterAll(async () => db?.drop());

  it('says yes when the server is not there (connection refused), also wrapped as a cause', async () => {
    const client = new pg.Client({
      host: '127.0.0.1',
      port: await closedPort(),
      connectionTimeoutMillis: 2_000,
    });
    const err = await caught(() => client.connect());
    expect(isDatabaseOutage(err)).toBe(true);
    expect(isDatabaseOutage(new Error('could not load the operation', { cause: err }))).toBe(true);
  });

  it('says yes when the server ends the session (admin_shutdown, as a restart or failover does)', async () => {
    const victim = new pg.Client({ connectionString: db.url });
    victim.on('error', () => undefined);
    await victim.connect();
    const { rows } = await victim.query<{ pid: number }>('select pg_backend_pid() as pid');
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
    await admin.end();
    const err = await caught(() => victim.query('select 1'));
    expect(isDatabaseOutage(err)).toBe(true);
    await victim.end().catch(() => undefined);
  });

  it('says no to answers about the data: a syntax error, a unique violation, a plain bug', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      expect(isDatabaseOutage(await caught(() => client.query('selec 1')))).toBe(false);
      await client.query('create temporary table once (id int primary key)');
      await client.query('insert into once values (1)');
      const dup = await caught(() => client.query('insert into once values (1)'));
      expect((dup as { code?: string }).code).toBe('23505');
      expect(isDatabaseOutage(dup)).toBe(false);
    } finally {
      await client.end();
    }
    expect(isDatabaseOutage(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(false);
    expect(isDatabaseOutage(undefined)).toBe(false);
  });
});
