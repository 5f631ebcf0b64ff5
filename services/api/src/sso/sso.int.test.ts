// Single sign-on against a real OpenID Connect provider: Dex (built from its Go module by
// test/scripts/obtain-dex.sh) with static password users carrying groups, driven over HTTP as a
// browser would. The api reads argocd-cm's oidc.config and url and argocd-rbac-cm's scopes live,
// and the client secret from an applied argocd-secret (kept sealed);
// the web flow sets the UI's session cookie; the CLI's flow (a loopback redirect URI) returns a
// session and a refresh token; groups become RBAC subjects (policy.csv `g` lines and project role
// groups); refresh asks the provider again and is single-use; logout revokes session and refresh
// token; every login, refused or not, is audited.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { sql } from 'kysely';
import { apiv1 } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError } from '../test-support/fixtures.js';
import {
  browserLogin,
  DEX_CLIENT_SECRET as DEX_SECRET,
  DEX_PASSWORD,
  freePort,
  startDex,
  type Dex,
} from '@capstan/test/infra';
import { cliCode, configMap, setCookies, webLogin } from '../test-support/sso.js';
import { TokenSigner } from '../auth/tokens.js';

const SIGNING_KEY = randomBytes(32).toString('base64');
const signer = new TokenSigner(Buffer.from(SIGNING_KEY, 'base64'));
const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as {
    sub: string;
    groups: string[];
    rid: string;
  };

const alice = {
  email: 'alice@example.com',
  username: 'alice',
  userID: 'alice-id',
  groups: ['devs', 'team-a-viewers'],
};
const bob = { email: 'bob@example.com', username: 'bob', userID: 'bob-id', groups: ['platform'] };

describe('api: single sign-on with Dex', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let dex: Dex;
  let admin: string;
  let cliRedirect: string;
  const as = (token: string) => ({ metadata: bearer(token) });
  const apply = (manifests: string) =>
    unary(c.apply.apply.bind(c.apply), { manifests, dryRun: false, strict: true }, as(admin));
  const canI = async (token: string, resource: string, action: string, object: string) =>
    (await unary(c.accounts.canI.bind(c.accounts), { resource, action, subresource: object }, as(token)))
      .value;

  beforeAll(async () => {
    h = await startHarness({ 'auth.signing-key': SIGNING_KEY });
    c = h.clients();
    admin = await h.login('admin', ADMIN_PASSWORD);
    cliRedirect = `http://127.0.0.1:${await freePort()}/auth/callback`;
    dex = await startDex({
      redirectURIs: [`${h.httpUrl}/auth/callback`, cliRedirect],
      users: [alice, bob],
    });
    await unary(
      c.projects.create.bind(c.projects),
      {
        project: apiv1.Project.fromJSON({
          metadata: { name: 'team-a' },
          spec: {
            sourceRepos: ['*'],
            roles: [
              {
                name: 'viewer',
                policies: ['p, proj:team-a:viewer, applications, get, team-a/*, allow'],
                groups: ['team-a-viewers'],
              },
            ],
          },
        }),
        upsert: false,
      },
      as(admin),
    );
  }, 120_000);
  afterAll(async () => {
    await dex?.stop();
    await h?.stop();
  });

  it('is off without oidc.config, and refuses a literal client secret in it', async () => {
    expect((await unary(c.sessions.getSsoConfig.bind(c.sessions), {})).enabled).toBe(false);
    const res = await fetch(`${h.httpUrl}/auth/login`, { redirect: 'manual' });
    expect(res.status).toBe(412);
    expect(await res.text()).toContain('argocd-cm has no oidc.config');
    const err = await grpcError(
      apply(
        configMap('argocd-cm', {
          'oidc.config': `issuer: ${dex.issuer}\nclientID: capstan\nclientSecret: hunter2\n`,
        }),
      ),
    );
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).not.toContain('hunter2');
  });

  it('configures live from argocd-cm and argocd-rbac-cm', async () => {
    await apply(
      configMap('argocd-cm', {
        url: h.httpUrl,
        'oidc.config': [
          'name: Dex',
          `issuer: ${dex.issuer}`,
          'clientID: capstan',
          'clientSecret: $oidc.clientSecret',
          'requestedScopes: [openid, profile, email, groups, offline_access]',
        ].join('\n'),
      }) +
        '---\n' +
        `apiVersion: v1\nkind: Secret\nmetadata: { name: argocd-secret, namespace: argocd }\nstringData:\n  oidc.clientSecret: ${DEX_SECRET}\n` +
        '---\n' +
        configMap('argocd-rbac-cm', {
          'policy.csv':
            'p, role:dev, applications, get, team-b/*, allow\ng, devs, role:dev\ng, platform, role:admin\n',
          scopes: '[groups, email]',
        }),
    );
    await new Promise((r) => setTimeout(r, 2100));
    // argocd-secret's oidc.clientSecret is kept sealed, and nowhere else
    const db = h.api.services.db;
    const plain = await sql<{ n: string }>`
      select (select count(*) from api.settings where data::text like ${`%${DEX_SECRET}%`})
           + (select count(*) from audit.settings_changes where changes::text like ${`%${DEX_SECRET}%`})
           + (select count(*) from api.settings_secrets where encode(ciphertext, 'escape') like ${`%${DEX_SECRET}%`}) as n`.execute(
      db,
    );
    expect(Number(plain.rows[0]!.n)).toBe(0);
    const kept = await sql<{ id: string }>`select id from api.settings_secrets`.execute(db);
    expect(kept.rows).toEqual([{ id: 'argocd-secret/oidc.clientSecret' }]);
    const cfg = await unary(c.sessions.getSsoConfig.bind(c.sessions), {});
    expect(cfg).toMatchObject({ enabled: true, name: 'Dex', issuer: dex.issuer, clientId: 'capstan' });
    expect(cfg.authorizationEndpoint).toBe(`${dex.issuer}/auth`);
  });

  it('logs a browser in: state cookie, Dex login, callback sets the session cookie; groups are RBAC subjects', async () => {
    const jar = new Map<string, string>();
    const start = await fetch(`${h.httpUrl}/auth/login?return_url=/applications/argocd/guestbook`, {
      redirect: 'manual',
    });
    expect(start.status).toBe(302);
    const stateCookie = start.headers.getSetCookie().find((s) => s.startsWith('capstan_oidc_state='))!;
    expect(stateCookie).toMatch(/HttpOnly/);
    expect(stateCookie).toMatch(/SameSite=Lax/);
    jar.set('capstan_oidc_state', stateCookie.split(';')[0]!.split('=')[1]!);
    const location = start.headers.get('location')!;
    expect(location.startsWith(`${dex.issuer}/auth?`)).toBe(true);
    expect(new URL(location).searchParams.get('code_challenge_method')).toBe('S256');

    const callback = await browserLogin(
      location,
      `${h.httpUrl}/auth/callback`,
      alice.email,
      DEX_PASSWORD,
      jar,
    );
    // Without the browser's state cookie, the code is worth nothing.
    const stolen = await fetch(callback, { redirect: 'manual' });
    expect(stolen.status).toBe(401);

    const done = await fetch(callback, {
      redirect: 'manual',
      headers: { cookie: `capstan_oidc_state=${jar.get('capstan_oidc_state')}` },
    });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('content="0;url=/applications/argocd/guestbook"');
    const set = done.headers.getSetCookie();
    const session = set.find((s) => s.startsWith('capstan_session='))!.split(';')[0]!;
    expect(set.some((s) => s.startsWith('capstan_csrf='))).toBe(true);

    const info = await fetch(`${h.httpUrl}/api/v1/session/userinfo`, { headers: { cookie: session } });
    expect(info.status).toBe(200);
    const user = (await info.json()) as { username: string; groups: string[] };
    expect(user.groups.sort()).toEqual(['alice@example.com', 'devs', 'team-a-viewers']);
    const token = session.slice('capstan_session='.length);
    expect(await canI(token, 'applications', 'get', 'team-b/web')).toBe('yes'); // g, devs, role:dev
    expect(await canI(token, 'applications', 'get', 'team-a/web')).toBe('yes'); // project role group team-a-viewers
    expect(await canI(token, 'applications', 'get', 'team-c/web')).toBe('no');
    expect(await canI(token, 'applications', 'sync', 'team-a/web')).toBe('no');
    expect(await canI(token, 'projects', 'create', 'team-z')).toBe('no');

    const audit = await sql<{ subject: string; decision: string; reason: string }>`
      select subject, decision, reason from audit.access_decisions
       where subject like 'login:sso:%' order by id`.execute(h.api.services.db);
    expect(audit.rows).toContainEqual(
      expect.objectContaining({ subject: `login:sso:${user.username}`, decision: 'allow' }),
    );
    expect(audit.rows).toContainEqual(
      expect.objectContaining({
        decision: 'deny',
        reason: 'no login in progress in this browser (state cookie missing)',
      }),
    );
  }, 60_000);

  it('logs the CLI in through a loopback redirect; refresh is single-use; logout revokes both tokens', async () => {
    const { code, verifier, nonce } = await cliCode(c, cliRedirect, bob);
    const wrong = await grpcError(
      unary(c.sessions.createSso.bind(c.sessions), {
        code,
        codeVerifier: randomBytes(32).toString('base64url'),
        redirectUri: cliRedirect,
        nonce,
      }),
    );
    expect(wrong.code).toBe(status.UNAUTHENTICATED);
    expect(wrong.details).toContain(
      'single sign-on failed: the OIDC provider refused the authorization_code grant',
    );

    const again = await cliCode(c, cliRedirect, bob);
    const s = await unary(c.sessions.createSso.bind(c.sessions), {
      code: again.code,
      codeVerifier: again.verifier,
      redirectUri: cliRedirect,
      nonce: again.nonce,
    });
    expect(s.groups.sort()).toEqual(['bob@example.com', 'platform']);
    expect(s.refreshToken).not.toBe('');
    expect(await canI(s.token, 'projects', 'create', 'anything')).toBe('yes'); // g, platform, role:admin

    const r = await unary(c.sessions.refresh.bind(c.sessions), { refreshToken: s.refreshToken });
    expect(r.username).toBe(s.username);
    expect(await canI(r.token, 'projects', 'create', 'anything')).toBe('yes');
    const reused = await grpcError(
      unary(c.sessions.refresh.bind(c.sessions), { refreshToken: s.refreshToken }),
    );
    expect(reused.code).toBe(status.UNAUTHENTICATED);

    await unary(c.sessions.delete.bind(c.sessions), {}, as(r.token));
    expect((await grpcError(canI(r.token, 'projects', 'get', 'x'))).code).toBe(status.UNAUTHENTICATED);
    const afterLogout = await grpcError(
      unary(c.sessions.refresh.bind(c.sessions), { refreshToken: r.refreshToken }),
    );
    expect(afterLogout.code).toBe(status.UNAUTHENTICATED);

    const bad = await grpcError(
      unary(c.sessions.createSso.bind(c.sessions), {
        code: 'x',
        codeVerifier: verifier,
        redirectUri: 'https://evil.example.com/auth/callback',
        nonce,
      }),
    );
    expect(bad.code).toBe(status.INVALID_ARGUMENT);
  }, 60_000);

  it("keeps a browser's session alive: the HttpOnly refresh cookie of /auth/refresh renews session and refresh near the end, once; logout clears all", async () => {
    const done = await webLogin(h, alice);
    expect(done.status).toBe(200);
    const login = setCookies(done);
    expect(login.raw.get('capstan_refresh')).toMatch(
      /^capstan_refresh=[^;]+; Path=\/auth\/refresh; SameSite=Strict; HttpOnly; Max-Age=2592000$/,
    );
    const session = login.values.get('capstan_session')!;
    const refresh = login.values.get('capstan_refresh')!;
    const post = (
      cookies: Record<string, string>,
      headers: Record<string, string> = { 'x-capstan-session': 'cookie' },
    ) =>
      fetch(`${h.httpUrl}/auth/refresh`, {
        method: 'POST',
        headers: {
          ...headers,
          cookie: Object.entries(cookies)
            .map(([k, v]) => `${k}=${v}`)
            .join('; '),
        },
      });
    // A cross-site form cannot send the header: nothing is renewed.
    expect((await post({ capstan_session: session, capstan_refresh: refresh }, {})).status).toBe(401);
    // Time left: the provider is not asked, no cookie is set.
    const early = await post({ capstan_session: session, capstan_refresh: refresh });
    expect(early.status).toBe(200);
    expect(await early.json()).toMatchObject({ renewed: false });
    expect(early.headers.getSetCookie()).toEqual([]);

    // A minute left (the same login chain): renewed, with new session, CSRF and refresh cookies.
    const c0 = claimsOf(session);
    const nearEnd = await signer.sign({
      sub: c0.sub,
      kind: 'sso',
      jti: randomUUID(),
      expiresInSeconds: 60,
      groups: c0.groups,
      rid: c0.rid,
    });
    const renewed = await post({ capstan_session: nearEnd, capstan_refresh: refresh });
    expect(renewed.status).toBe(200);
    const body = (await renewed.json()) as { renewed: boolean; expiresAt: string };
    expect(body.renewed).toBe(true);
    expect(Date.parse(body.expiresAt)).toBeGreaterThan(Date.now() + 3000_000);
    const next = setCookies(renewed);
    const session2 = next.values.get('capstan_session')!;
    const refresh2 = next.values.get('capstan_refresh')!;
    expect(session2).not.toBe(nearEnd);
    expect(refresh2).not.toBe(refresh);
    expect(next.values.get('capstan_csrf')).toBeTruthy();
    const info = await fetch(`${h.httpUrl}/api/v1/session/userinfo`, {
      headers: { cookie: `capstan_session=${session2}` },
    });
    expect(((await info.json()) as { username: string }).username).toBe(c0.sub);

    // Each refresh token works once; with no valid session left the spent cookie is cleared.
    const reused = await post({ capstan_refresh: refresh });
    expect(reused.status).toBe(401);
    expect(setCookies(reused).raw.get('capstan_refresh')).toMatch(
      /^capstan_refresh=; Path=\/auth\/refresh;.*Max-Age=0/,
    );

    // The session cookie gone (the browser dropped it at its expiry): the refresh cookie alone renews.
    const alone = await post({ capstan_refresh: refresh2 });
    expect(alone.status).toBe(200);
    const third = setCookies(alone);
    const session3 = third.values.get('capstan_session')!;
    const refresh3 = third.values.get('capstan_refresh')!;

    // Logout with the cookie clears all three cookies and revokes the refresh token.
    const out = await fetch(`${h.httpUrl}/api/v1/session`, {
      method: 'DELETE',
      headers: { cookie: `capstan_session=${session3}`, 'x-capstan-csrf': third.values.get('capstan_csrf')! },
    });
    expect(out.status).toBe(200);
    const cleared = setCookies(out);
    expect(cleared.values.get('capstan_session')).toBe('');
    expect(cleared.values.get('capstan_csrf')).toBe('');
    expect(cleared.raw.get('capstan_refresh')).toMatch(/^capstan_refresh=; Path=\/auth\/refresh;.*Max-Age=0/);
    expect((await post({ capstan_refresh: refresh3 })).status).toBe(401);

    await h.api.services.authz.flush();
    const audit = await sql<{ action: string; decision: string; reason: string }>`
      select action, decision, reason from audit.access_decisions
       where subject like '%' || ${c0.sub} order by id`.execute(h.api.services.db);
    expect(
      audit.rows.filter((r) => r.action === 'login' && r.decision === 'allow').length,
    ).toBeGreaterThanOrEqual(3);
    expect(audit.rows).toContainEqual(
      expect.objectContaining({
        decision: 'deny',
        reason: 'refresh token revoked (logged out or already used)',
      }),
    );
    expect(audit.rows).toContainEqual(expect.objectContaining({ action: 'logout', decision: 'allow' }));
  }, 60_000);
});
