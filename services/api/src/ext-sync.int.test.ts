// Other systems ask for syncs on <ns>.ext.<source>.sync.request: the api authorises each as the
// Capstan account mapped to the source (bus.ext-accounts), with the same RBAC as `capstan app sync`,
// records the decision in audit.access_decisions, and publishes the command only when allowed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { headers } from 'nats';
import { apiv1 } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from './test-support/harness.js';
import { guestbook, httpClient, teamA } from './test-support/fixtures.js';
import type { TestBusUser } from '@capstan/test/infra';

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('api: sync requests from other systems', () => {
  let h: Harness;

  const ask = async (user: TestBusUser, source: string, app: string, actor = 'user:admin') => {
    const id = randomUUID();
    const event = {
      specversion: '1.0',
      id,
      correlationid: id,
      source: `ci/${source}`,
      type: 'io.capstan.ext.sync.request.v1',
      subject: `applications/argocd/${app}`,
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      actor, // claimed by the publisher: never believed
      data: { application: { name: app }, prune: true },
    };
    const nc = await h.bus.connect(user);
    try {
      const hd = headers();
      hd.set('Nats-Msg-Id', id);
      await nc
        .jetstream()
        .publish(`${h.bus.namespace}.ext.${source}.sync.request`, JSON.stringify(event), { headers: hd });
    } finally {
      await nc.close();
    }
    return id;
  };

  const decisionsFor = (subject: string, object: string) =>
    sql<{ decision: string; via: string; reason: string }>`
      select decision, via, reason from audit.access_decisions
      where subject = ${subject} and resource = 'applications' and action = 'sync' and object = ${object}`
      .execute(h.api.services.db)
      .then((r) => (r.rows.length > 0 ? r.rows : undefined));

  const operationsOf = (app: string) =>
    sql<{ initiated_by: string }>`select initiated_by from api.sync_operations where app_name = ${app}`
      .execute(h.api.services.db)
      .then((r) => r.rows);

  beforeAll(async () => {
    h = await startHarness({
      'bus.ext-accounts': 'ci=ci-bot',
      // ci-bot may sync guestbook only, as any account would be granted it.
      'rbac.policy-csv':
        'p, ci-bot, applications, sync, team-a/guestbook, allow\np, ci-bot, applications, get, team-a/*, allow',
    });
    const c = h.clients();
    const http = httpClient(h);
    const admin = await h.login('admin', ADMIN_PASSWORD);
    await unary(
      c.projects.create.bind(c.projects),
      { project: apiv1.Project.fromJSON(teamA), upsert: false },
      { metadata: bearer(admin) },
    );
    expect(
      (await http('POST', '/api/v1/account', admin, { name: 'ci-bot', password: randomUUID() })).status,
    ).toBe(200);
    for (const name of ['guestbook', 'billing'])
      await unary(
        c.applications.create.bind(c.applications),
        { application: apiv1.Application.fromJSON(guestbook('team-a', name)), upsert: false },
        { metadata: bearer(admin) },
      );
  });
  afterAll(async () => h?.stop());

  it('denies and audits a request for an Application the mapped account may not sync, whatever actor it claims', async () => {
    await ask('ext-ci', 'ci', 'billing', 'user:admin');
    const rows = await waitFor(() => decisionsFor('user:ci-bot via ext:ci', 'team-a/billing'));
    expect(rows).toEqual([expect.objectContaining({ decision: 'deny', via: 'bus' })]);
    expect(await operationsOf('billing')).toEqual([]);
  });

  it('denies and audits a request from a source that has no Capstan account', async () => {
    await ask('ext-git', 'git', 'guestbook');
    const rows = await waitFor(() => decisionsFor('ext:git', '*/guestbook'));
    expect(rows[0]).toMatchObject({ decision: 'deny', via: 'bus' });
    expect(rows[0]!.reason).toContain('no Capstan account is mapped to external source git');
  });

  it('syncs as the mapped account when it may, and names both in the history', async () => {
    await ask('ext-ci', 'ci', 'guestbook', 'user:admin');
    const rows = await waitFor(() => decisionsFor('user:ci-bot via ext:ci', 'team-a/guestbook'));
    expect(rows[0]).toMatchObject({ decision: 'allow', via: 'bus' });
    const ops = await waitFor(async () => {
      const o = await operationsOf('guestbook');
      return o.length > 0 ? o : undefined;
    });
    expect(ops).toEqual([{ initiated_by: 'user:ci-bot via ext:ci' }]);
    // The command tells the sync service (and the history) that the bus asked.
    const commands = await sql<{ data: unknown }>`
      select envelope->'data' as data from api.events
      where envelope->>'type' = 'io.capstan.cmd.sync.request.v1'
        and envelope->'data'->'application'->>'name' = 'guestbook'`
      .execute(h.api.services.db)
      .then((r) => r.rows);
    expect(commands.map((c) => c.data)).toEqual([
      expect.objectContaining({ trigger: { kind: 'bus', actor: 'user:ci-bot via ext:ci' } }),
    ]);
  });
});
