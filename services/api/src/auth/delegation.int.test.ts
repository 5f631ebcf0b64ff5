// Regression tests of issue 10 §4 on the real api (gRPC over TLS, PostgreSQL): a service token
// alone, or with a delegation it was not issued, cannot act as a user; owner delegations follow the
// owner's account of today; every delegated decision is audited with both identities.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { createPrivateKey } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';
import { apiv1 } from '@capstan/proto';
import {
  ADMIN_PASSWORD,
  APPSET_TOKEN,
  bearer,
  startHarness,
  unary,
  type Harness,
} from '../test-support/harness.js';
import { grpcError, httpClient, teamA } from '../test-support/fixtures.js';

let h: Harness;
let mint: Harness['api']['services']['delegations'];

function md(token: string, extra: Record<string, string> = {}): Metadata {
  const m = bearer(token);
  for (const [k, v] of Object.entries(extra)) m.set(k, v);
  return m;
}

/** ProjectService.List as the appset service with `extra` metadata. */
async function listAsAppset(extra: Record<string, string>, channel: 'appset' | 'sync' | 'user' = 'appset') {
  const c = channel === 'user' ? h.clients() : h.serviceClients(channel);
  return unary(c.projects.list.bind(c.projects), {}, { metadata: md(APPSET_TOKEN, extra) });
}

const user = (name: string) => ({ name, groups: [], kind: 'user' as const });

beforeAll(async () => {
  h = await startHarness({
    'rbac.policy-csv':
      'p, role:team-a-reader, projects, get, team-a, allow\ng, tenant-a, role:team-a-reader\n',
  });
  mint = h.api.services.delegations;
  const admin = await h.login('admin', ADMIN_PASSWORD);
  const c = h.clients();
  await unary(
    c.projects.create.bind(c.projects),
    { project: apiv1.Project.fromJSON(teamA), upsert: false },
    { metadata: bearer(admin) },
  );
  const http = httpClient(h);
  for (const name of ['alice', 'bob'])
    expect(
      (
        await http('POST', '/api/v1/account', admin, {
          name,
          password: `${name}-password`,
          groups: ['tenant-a'],
        })
      ).status,
    ).toBe(200);
});
afterAll(async () => h?.stop());

describe('a service acts for a user only with a delegation minted for it', () => {
  it("a single sign-on user's delegation carries the session's groups, and never names a local account", async () => {
    const sso = (groups: string[], name = 'sso-carol') => ({
      name,
      groups,
      kind: 'user' as const,
      sso: { refreshId: undefined },
    });
    const d = await mint.forRequest(sso(['tenant-a']), 'appset', 'api');
    const res = await listAsAppset({ 'capstan-delegation': d! });
    expect(res.items.map((p) => p.metadata?.name)).toEqual(['team-a']);
    const none = await mint.forRequest(sso([]), 'appset', 'api');
    expect((await listAsAppset({ 'capstan-delegation': none! })).items).toEqual([]);
    const posing = await mint.forRequest(sso(['tenant-a'], 'alice'), 'appset', 'api');
    const e = await grpcError(listAsAppset({ 'capstan-delegation': posing! }));
    expect(e.code).toBe(status.UNAUTHENTICATED);
    // It may own a set (recorded as a single sign-on owner): its owner delegations are issued only
    // with its standing (sso/sso-owners.int.test.ts), never without.
    await mint.recordOwner(
      { ...sso(['tenant-a']), via: 'service:appset', delegation: { kind: 'user' } },
      'applicationsets/argocd/x',
    );
    await expect(mint.forOwner('appset', 'applicationsets/argocd/x', 'api')).rejects.toThrow(
      /single sign-on owners are not accepted here/,
    );
    await h.api.services.authz.flush();
    const rows = await h.api.services.db
      .withSchema('audit')
      .selectFrom('access_decisions' as never)
      .select('subject' as never)
      .execute();
    expect(JSON.stringify(rows)).toContain('user:sso-carol via service:appset');
  });

  it('the appset token alone cannot act as anyone (no on-behalf-of)', async () => {
    const e = await grpcError(listAsAppset({ 'capstan-on-behalf-of': 'admin' }));
    expect(e.code).toBe(status.PERMISSION_DENIED);
  });

  it('a valid delegation makes the caller that user, audited with both identities', async () => {
    const d = await mint.forRequest(user('alice'), 'appset', 'api');
    const res = await listAsAppset({ 'capstan-delegation': d! });
    expect(res.items.map((p) => p.metadata?.name)).toEqual(['team-a']);
    await h.api.services.authz.flush();
    const rows = await h.api.services.db
      .withSchema('audit')
      .selectFrom('access_decisions' as never)
      .select('subject' as never)
      .execute();
    expect(JSON.stringify(rows)).toContain('user:alice via service:appset');
  });

  it('refuses a delegation minted for another holder or another audience', async () => {
    const forApi = await mint.forRequest(user('alice'), 'api', 'api');
    expect((await grpcError(listAsAppset({ 'capstan-delegation': forApi! }))).code).toBe(
      status.PERMISSION_DENIED,
    );
    const forRepo = await mint.forRequest(user('alice'), 'appset', 'repo');
    expect((await grpcError(listAsAppset({ 'capstan-delegation': forRepo! }))).code).toBe(
      status.PERMISSION_DENIED,
    );
  });

  it('refuses an expired delegation', async () => {
    const key = createPrivateKey(h.pki.delegation.privateKeyPem);
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ hld: 'appset', kind: 'user' })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'capstan-delegation+jwt' })
      .setIssuer('capstan-api')
      .setSubject('alice')
      .setAudience('api')
      .setJti('expired')
      .setIssuedAt(now - 300)
      .setExpirationTime(now - 60)
      .sign(key);
    const e = await grpcError(listAsAppset({ 'capstan-delegation': expired }));
    expect(e.code).toBe(status.UNAUTHENTICATED);
    expect(e.details).toMatch(/expired/);
  });

  it("cannot be used without the holder's own identity (its certificate and its token)", async () => {
    const d = (await mint.forRequest(user('alice'), 'appset', 'api'))!;
    // The appset token on a connection without the appset certificate.
    expect((await grpcError(listAsAppset({ 'capstan-delegation': d }, 'user'))).code).toBe(
      status.UNAUTHENTICATED,
    );
    // The appset token with the sync service's certificate.
    expect((await grpcError(listAsAppset({ 'capstan-delegation': d }, 'sync'))).code).toBe(
      status.UNAUTHENTICATED,
    );
    // The delegation with a user's session token instead of a service identity.
    const bob = await h.login('bob', 'bob-password');
    const c = h.serviceClients('appset');
    const e = await grpcError(
      unary(c.projects.list.bind(c.projects), {}, { metadata: md(bob, { 'capstan-delegation': d }) }),
    );
    expect(e.code).toBe(status.UNAUTHENTICATED);
  });
});

describe('owner delegations for background work', () => {
  const resource = 'applicationsets/argocd/addons';

  it('are granted only for an owner recorded from a user delegation, and follow the account of today', async () => {
    // A service cannot make itself (or anyone) an owner.
    await expect(
      mint.recordOwner({ name: 'service:appset', groups: [], kind: 'service' }, resource),
    ).rejects.toThrow(/delegation/);
    await expect(mint.forOwner('appset', resource, 'api')).rejects.toThrow(/no owner recorded/);

    await mint.recordOwner(
      { ...user('alice'), via: 'service:appset', delegation: { kind: 'user' } },
      resource,
    );
    // Another holder has no grant for it.
    await expect(mint.forOwner('sync', resource, 'api')).rejects.toThrow(/no owner recorded/);
    const { token, owner } = await mint.forOwner('appset', resource, 'api');
    expect(owner).toBe('alice');
    const res = await listAsAppset({ 'capstan-delegation': token });
    expect(res.items.map((p) => p.metadata?.name)).toEqual(['team-a']);

    // The owner is disabled: the same delegation, and any new one, is refused.
    await h.api.services.db
      .withSchema('api')
      .updateTable('accounts')
      .set({ enabled: false })
      .where('name', '=', 'alice')
      .execute();
    h.api.services.authn.forgetAccount('alice');
    expect((await grpcError(listAsAppset({ 'capstan-delegation': token }))).code).toBe(
      status.UNAUTHENTICATED,
    );
    const again = await mint.forOwner('appset', resource, 'api');
    expect((await grpcError(listAsAppset({ 'capstan-delegation': again.token }))).code).toBe(
      status.UNAUTHENTICATED,
    );
  });
});
