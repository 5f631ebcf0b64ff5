// Login throttling on the real api (PostgreSQL, NATS): after max-fail-count failures an account's
// logins are refused with RESOURCE_EXHAUSTED / 429, the right password included, the same way for an
// account that does not exist; the lockout ends when the failure window has passed since the last
// failure; a source address spraying many accounts is locked out as a whole; every refusal is audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { sql } from 'kysely';
import { ADMIN_PASSWORD, startHarness, type Harness } from '../test-support/harness.js';
import { grpcError, httpClient } from '../test-support/fixtures.js';

const WINDOW_SECONDS = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('login throttling', () => {
  let h: Harness;
  let http: ReturnType<typeof httpClient>;

  const login = (username: string, password: string) =>
    http('POST', '/api/v1/session', undefined, { username, password });
  const reasons = async (subject: string) =>
    (
      await sql<{ decision: string; reason: string }>`select decision, reason from audit.access_decisions
        where subject = ${subject} order by id`.execute(h.api.services.db)
    ).rows.map((r) => `${r.decision} ${r.reason}`);

  beforeAll(async () => {
    h = await startHarness({
      'auth.login.max-fail-count': 5,
      'auth.login.max-fail-count-per-address': 12,
      'auth.login.failure-window-seconds': WINDOW_SECONDS,
    });
    http = httpClient(h);
    const admin = await h.login('admin', ADMIN_PASSWORD);
    expect(
      (await http('POST', '/api/v1/account', admin, { name: 'bob', password: 'bob-password-1' })).status,
    ).toBe(200);
  });
  afterAll(async () => h?.stop());

  it('locks an account out after 5 failures (the right password too), existing or not, and audits it', async () => {
    const attempts = async (user: string) => {
      const out: { status: number; body: unknown }[] = [];
      for (let i = 0; i < 40; i++) out.push(await login(user, `wrong-${i}`));
      return out;
    };
    const bob = await attempts('bob');
    expect(bob.slice(0, 5).map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
    expect(new Set(bob.slice(5).map((r) => r.status))).toEqual(new Set([429]));
    expect(bob[5]?.body).toEqual({
      code: 'RESOURCE_EXHAUSTED',
      message: 'too many failed logins; try again later',
    });
    expect((await login('bob', 'bob-password-1')).status).toBe(429);

    // An account that does not exist answers exactly the same way.
    const ghost = await attempts('ghost');
    expect(ghost).toEqual(bob);

    const audited = await reasons('login:bob');
    expect(audited.filter((r) => r === 'deny wrong password')).toHaveLength(5);
    expect(
      audited.filter((r) => r.startsWith('deny locked out: 5 failed logins from this account')),
    ).toHaveLength(36);
    expect(audited).not.toContain('allow password verified');
  });

  it('lets the account in again once the failure window has passed', async () => {
    await sleep(WINDOW_SECONDS * 1000 + 500);
    expect((await login('bob', 'bob-password-1')).status).toBe(200);
    // The success forgot bob's failures: one more wrong password is an ordinary 401.
    expect((await login('bob', 'nope')).status).toBe(401);
  });

  it('locks out a source address that sprays passwords over many accounts, over both transports', async () => {
    await sleep(WINDOW_SECONDS * 1000 + 500);
    for (let i = 0; i < 12; i++) {
      const err = await grpcError(h.login(`spray-${i}`, 'password'));
      expect(err.code).toBe(status.UNAUTHENTICATED);
    }
    const err = await grpcError(h.login('admin', ADMIN_PASSWORD));
    expect(err.code).toBe(status.RESOURCE_EXHAUSTED);
    expect((await login('admin', ADMIN_PASSWORD)).status).toBe(429);
    expect((await reasons('login:admin')).at(-1)).toMatch(
      /^deny locked out: 12 failed logins from this address \(127\.0\.0\.1\) within 3 s$/,
    );
  });
});
