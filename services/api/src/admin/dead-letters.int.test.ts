// capstan admin dlq against the real api, PostgreSQL and NATS: a malformed message from another
// system on the api's own consumer lands in api.dead_letters; admins list and replay it (the api's
// replay consumer records the outcome), tenants are refused, every decision is audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { StringCodec } from 'nats';
import { createDb } from '@capstan/db';
import { ADMIN_PASSWORD, startHarness, type Harness } from '../test-support/harness.js';
import { httpClient } from '../test-support/fixtures.js';

const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

interface Listed {
  items: {
    id: string;
    consumer: string;
    reason: string;
    replays: number;
    replayOutcome: string;
    replayedBy: string;
  }[];
}

describe('dead letters through the api', () => {
  let h: Harness;
  let http: ReturnType<typeof httpClient>;
  let admin: string;
  let tenant: string;

  beforeAll(async () => {
    h = await startHarness();
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
    await http('POST', '/api/v1/account', admin, { name: 'alice', password: 'alice-password', groups: [] });
    tenant = await h.login('alice', 'alice-password');
  });
  afterAll(async () => h?.stop());

  it('given a malformed external sync request, then admins list and replay it, tenants are refused, and every decision is audited', async () => {
    const ext = await h.bus.connect('ext-ci');
    await ext
      .jetstream()
      .publish(`${h.bus.namespace}.ext.ci.sync.request`, StringCodec().encode('{"not":"an event"'));
    await ext.close();

    const listed = await waitFor('the dead letter', async () => {
      const r = await http('GET', '/api/v1/deadletters?service=api', admin);
      const items = (r.body as unknown as Listed).items;
      return r.status === 200 && items.length === 1 ? items[0]! : undefined;
    });
    expect(listed).toMatchObject({
      consumer: 'api-ext-sync-requests',
      reason: 'message is not json',
      replays: 0,
    });
    expect(listed.id).toMatch(/^api:\d+$/);

    expect((await http('GET', '/api/v1/deadletters', tenant)).status).toBe(403);
    expect((await http('POST', `/api/v1/deadletters/${listed.id}/replay`, tenant)).status).toBe(403);
    const bad = await http('POST', '/api/v1/deadletters/nope/replay', admin);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('id');
    expect((await http('GET', '/api/v1/deadletters?service=billing', admin)).status).toBe(400);

    expect((await http('POST', `/api/v1/deadletters/${listed.id}/replay`, admin)).status).toBe(200);
    const replayed = await waitFor('the outcome', async () => {
      const items = ((await http('GET', '/api/v1/deadletters', admin)).body as unknown as Listed).items;
      return items[0]?.replays === 1 ? items[0] : undefined;
    });
    expect(replayed).toMatchObject({
      replayOutcome: 'failed: message is not json',
      replayedBy: 'user:admin',
    });

    const db = createDb(h.db.url);
    try {
      const decisions = await sql<{ subject: string; action: string; decision: string }>`
        select subject, action, decision from audit.access_decisions
         where resource = 'deadletters' order by id`.execute(db);
      expect(decisions.rows).toEqual(
        expect.arrayContaining([
          { subject: 'user:alice', action: 'get', decision: 'deny' },
          { subject: 'user:alice', action: 'replay', decision: 'deny' },
          { subject: 'user:admin', action: 'replay', decision: 'allow' },
          { subject: 'user:admin', action: 'get', decision: 'allow' },
        ]),
      );
    } finally {
      await db.destroy();
    }
  }, 90_000);
});
