// Allowed reads are recorded in audit.access_decisions in batches shortly after they are answered
// (authorizer.ts). The batch timer runs only while reads wait to be written, never at rest: here
// each read, the first and one after a quiet spell, is in the table within moments, while the api
// keeps running (no shutdown flush, no 500-row batch). Real PostgreSQL and NATS, over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { ADMIN_PASSWORD, startHarness, type Harness } from '../test-support/harness.js';
import { httpClient } from '../test-support/fixtures.js';

describe('api: allowed reads reach the audit trail without a shutdown', () => {
  let h: Harness;
  let admin: string;

  beforeAll(async () => {
    h = await startHarness();
    admin = await h.login('admin', ADMIN_PASSWORD);
  });
  afterAll(async () => h?.stop());

  /** The allowed reads of projects recorded for admin so far. */
  const recordedReads = async () =>
    (
      await sql<{ n: number }>`select count(*)::int as n from audit.access_decisions
        where subject = 'user:admin' and resource = 'projects' and action in ('get', 'list')
          and decision = 'allow'`.execute(h.api.services.db)
    ).rows[0]!.n;

  const readsRecorded = async (n: number) => {
    await expect.poll(recordedReads, { timeout: 5_000, interval: 50 }).toBe(n);
  };

  it('given a read, then a quiet spell, then another read, when each is answered, then each is recorded within moments', async () => {
    const http = httpClient(h);
    expect(await recordedReads()).toBe(0);
    expect((await http('GET', '/api/v1/projects', admin)).status).toBe(200);
    await readsRecorded(1);
    // Nothing waits to be written now: the next read arms the batch again.
    await new Promise((r) => setTimeout(r, 500));
    expect((await http('GET', '/api/v1/projects', admin)).status).toBe(200);
    expect((await http('GET', '/api/v1/projects', admin)).status).toBe(200);
    await readsRecorded(3);
  });
});
