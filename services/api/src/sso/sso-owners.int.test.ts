// A single sign-on user owns an ApplicationSet (docs/sso.md, docs/applicationsets.md), against a
// real Dex and the real api (gRPC over mutual TLS, PostgreSQL): the api records the user's groups
// at each login and refresh (api.sso_subjects); the owner delegation it issues to the appset
// service carries those groups, and is refused, with the reason audited, once the user logged out
// of every session, the provider refused a refresh, or the last verification is older than
// auth.sso.owner-max-verification-age-seconds; a new login resumes it.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Metadata } from '@grpc/grpc-js';
import { status } from '@grpc/grpc-js';
import { sql } from 'kysely';
import { apiv1 } from '@capstan/proto';
import { freePort, startDex, type Dex } from '@capstan/test/infra';
import {
  ADMIN_PASSWORD,
  APPSET_TOKEN,
  bearer,
  startHarness,
  unary,
  type Harness,
} from '../test-support/harness.js';
import { grpcError, teamA } from '../test-support/fixtures.js';
import { cliLogin, ssoManifests } from '../test-support/sso.js';
import { TokenSigner } from '../auth/tokens.js';
import { SsoTokens } from './sso-tokens.js';

const SIGNING_KEY = randomBytes(32).toString('base64');
const carol = { email: 'carol@example.com', username: 'carol', userID: 'carol-id', groups: ['tenant-a'] };
const RESOURCE = 'applicationsets/argocd/addons';
const MONTH = 30 * 24 * 3600;

describe('api: an ApplicationSet owned by a single sign-on user', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let appset: ReturnType<Harness['clients']>;
  let dex: Dex;
  let cliRedirect: string;
  const asAppset = (delegation?: string) => {
    const md: Metadata = bearer(APPSET_TOKEN);
    if (delegation) md.set('capstan-delegation', delegation);
    return { metadata: md };
  };
  const issue = () =>
    unary(
      appset.delegation.issueOwnerDelegation.bind(appset.delegation),
      { resource: RESOURCE, audience: 'api' },
      asAppset(),
    );
  const projectsAs = async (delegation: string) =>
    (await unary(appset.projects.list.bind(appset.projects), {}, asAppset(delegation))).items.map(
      (p) => p.metadata?.name,
    );
  const lastIssueDecision = async () => {
    await h.api.services.authz.flush();
    const r = await sql<{ decision: string; reason: string }>`
      select decision, reason from audit.access_decisions
       where action = 'issue-owner' and object = ${RESOURCE} order by id desc limit 1`.execute(
      h.api.services.db,
    );
    return r.rows[0];
  };

  beforeAll(async () => {
    h = await startHarness({ 'auth.signing-key': SIGNING_KEY });
    c = h.clients();
    appset = h.serviceClients('appset');
    const admin = await h.login('admin', ADMIN_PASSWORD);
    cliRedirect = `http://127.0.0.1:${await freePort()}/auth/callback`;
    dex = await startDex({ redirectURIs: [`${h.httpUrl}/auth/callback`, cliRedirect], users: [carol] });
    const md = { metadata: bearer(admin) };
    await unary(
      c.projects.create.bind(c.projects),
      { project: apiv1.Project.fromJSON(teamA), upsert: false },
      md,
    );
    const manifests = ssoManifests(
      h,
      dex.issuer,
      'p, role:team-a-reader, projects, get, team-a, allow\ng, tenant-a, role:team-a-reader\n',
    );
    await unary(c.apply.apply.bind(c.apply), { manifests, dryRun: false, strict: true }, md);
    await new Promise((r) => setTimeout(r, 2100));
  }, 120_000);
  afterAll(async () => {
    await dex?.stop();
    await h?.stop();
  });

  it('records the owner from the user delegation the api minted for the forwarded create, and reconciles with the groups the provider verified', async () => {
    const s = await cliLogin(c, cliRedirect, carol);
    expect(s.groups.sort()).toEqual(['carol@example.com', 'tenant-a']);
    // What the api mints when it forwards carol's `appset create` to the appset service.
    const principal = {
      name: s.username,
      groups: s.groups,
      kind: 'user' as const,
      sso: { refreshId: undefined },
    };
    const forwarded = await h.api.services.delegations.forRequest(principal, 'appset', 'api');
    const recorded = await unary(
      appset.delegation.recordOwner.bind(appset.delegation),
      { resource: RESOURCE },
      asAppset(forwarded),
    );
    expect(recorded.owner).toBe(s.username);
    const grant = await sql<{
      owner_kind: string;
    }>`select owner_kind from api.delegation_grants where resource = ${RESOURCE}`.execute(h.api.services.db);
    expect(grant.rows).toEqual([{ owner_kind: 'sso' }]);

    const owner = await issue();
    expect(owner.owner).toBe(s.username);
    expect(await projectsAs(owner.delegation)).toEqual(['team-a']); // g, tenant-a, role:team-a-reader
    expect(await lastIssueDecision()).toMatchObject({
      decision: 'allow',
      reason: expect.stringMatching(/single sign-on groups verified 20/),
    });
    const row = await sql<{
      groups: string[];
      ended_at: Date | null;
    }>`select groups, ended_at from api.sso_subjects where subject = ${s.username}`.execute(
      h.api.services.db,
    );
    expect(row.rows).toEqual([{ groups: ['tenant-a', 'carol@example.com'], ended_at: null }]);

    // Two sessions: logging out of one leaves the other; logging out of both pauses the set.
    const other = await cliLogin(c, cliRedirect, carol);
    await unary(c.sessions.delete.bind(c.sessions), {}, { metadata: bearer(s.token) });
    expect((await issue()).owner).toBe(s.username);
    await unary(c.sessions.delete.bind(c.sessions), {}, { metadata: bearer(other.token) });
    const out = await grpcError(issue());
    expect(out.code).toBe(status.PERMISSION_DENIED);
    expect(out.details).toMatch(
      /the owner of applicationsets\/argocd\/addons cannot act: single sign-on user .+: logged out of every session \(.+\); log in again to resume/,
    );
    expect(await lastIssueDecision()).toMatchObject({
      decision: 'deny',
      reason: expect.stringContaining('logged out of every session'),
    });

    // A new login resumes it.
    await cliLogin(c, cliRedirect, carol);
    expect((await issue()).owner).toBe(s.username);
  }, 90_000);

  it('pauses once the last verification is older than the bound, and resumes at a refresh', async () => {
    const s = await cliLogin(c, cliRedirect, carol);
    await sql`update api.sso_subjects set verified_at = now() - make_interval(secs => ${MONTH + 60})
               where subject = ${s.username}`.execute(h.api.services.db);
    const old = await grpcError(issue());
    expect(old.code).toBe(status.PERMISSION_DENIED);
    expect(old.details).toContain(
      `longer ago than auth.sso.owner-max-verification-age-seconds (${MONTH}); log in again to resume`,
    );
    // The CLI refreshes its session: the provider vouches again.
    await unary(c.sessions.refresh.bind(c.sessions), { refreshToken: s.refreshToken });
    expect((await issue()).owner).toBe(s.username);
  }, 60_000);

  it('pauses when the provider refuses a refresh, audited; a local account of the same name is never the owner', async () => {
    const s = await cliLogin(c, cliRedirect, carol);
    // A refresh token the provider does not know (its grant revoked there): Dex answers invalid_grant.
    const sealed = await new SsoTokens(new TokenSigner(Buffer.from(SIGNING_KEY, 'base64'))).sealRefresh({
      rt: randomBytes(24).toString('base64url'),
      sub: s.username,
      cid: 'capstan',
      jti: randomUUID(),
    });
    const refused = await grpcError(unary(c.sessions.refresh.bind(c.sessions), { refreshToken: sealed }));
    expect(refused.code).toBe(status.UNAUTHENTICATED);
    expect(refused.details).toContain("the user's standing for owned ApplicationSets ended");
    const out = await grpcError(issue());
    expect(out.code).toBe(status.PERMISSION_DENIED);
    expect(out.details).toContain('refused by the provider at a refresh');
    expect(await lastIssueDecision()).toMatchObject({
      decision: 'deny',
      reason: expect.stringContaining('refused by the provider'),
    });

    await cliLogin(c, cliRedirect, carol);
    expect((await issue()).owner).toBe(s.username);
    // An account stored later under the subject's name (the api's own names are DNS labels, so
    // only a row written beside it) cannot inherit the set.
    await sql`insert into api.accounts (name, enabled, capabilities, groups, created_at, password_changed_at)
              values (${s.username}, true, '["login"]', '[]', now(), now())`.execute(h.api.services.db);
    h.api.services.authn.forgetAccount(s.username);
    const posing = await grpcError(issue());
    expect(posing.code).toBe(status.PERMISSION_DENIED);
    expect(posing.details).toContain("is now a local account's name");
  }, 60_000);
});
