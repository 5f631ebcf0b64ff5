// The web UI's side of the api on the real stack (PostgreSQL, NATS): the cookie session (HttpOnly,
// SameSite=Strict, no token in the body, CSRF on state-changing calls, only session tokens, logout
// clears it), the Application stream fed by the bus (RBAC checked), and the built assets with
// their caching and the SPA fallback.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, newEvent, syncStatusChanged, type Bus } from '@capstan/events';
import { ADMIN_PASSWORD, startHarness, type Harness } from '../test-support/harness.js';
import { guestbook, httpClient, teamA } from '../test-support/fixtures.js';
import { csrfTokenOf } from './session-cookie.js';

const uiDir = mkdtempSync(join(tmpdir(), 'capstan-ui-'));
mkdirSync(join(uiDir, 'assets'));
writeFileSync(join(uiDir, 'index.html'), '<!doctype html><title>Capstan</title>');
writeFileSync(join(uiDir, 'assets', 'index-abc123.js'), 'console.log(1)');

function cookiesOf(res: Response): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of res.headers.getSetCookie()) out.set(c.split('=')[0]!, c);
  return out;
}

const valueOf = (setCookie: string) => setCookie.split(';')[0]!.split('=').slice(1).join('=');

describe('api: the web UI (cookie session, CSRF, stream, assets)', () => {
  let h: Harness;
  let admin: string;
  let session: string;
  let csrf: string;
  let sync: Bus;

  const call = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
    fetch(`${h.httpUrl}${path}`, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const withCookie = (extra: Record<string, string> = {}) => ({
    cookie: `capstan_session=${session}; capstan_csrf=${csrf}`,
    ...extra,
  });

  beforeAll(async () => {
    h = await startHarness({
      'api.ui.dir': uiDir,
      'rbac.policy-csv': 'p, bob, applications, get, team-a/*, allow',
    });
    admin = await h.login('admin', ADMIN_PASSWORD);
    const http = httpClient(h);
    expect((await http('POST', '/api/v1/projects', admin, { project: teamA })).status).toBe(200);
    expect(
      (await http('POST', '/api/v1/applications', admin, { application: guestbook('team-a') })).status,
    ).toBe(200);
    expect(
      (await http('POST', '/api/v1/account', admin, { name: 'carol', password: 'carol-password-0' })).status,
    ).toBe(200);
    sync = await connectBus({ ...h.bus.connection('sync'), service: 'sync' });
  });
  afterAll(async () => {
    await sync?.close();
    await h?.stop();
  });

  it('logs in to an HttpOnly SameSite=Strict cookie and leaves the token out of the body', async () => {
    const res = await call(
      'POST',
      '/api/v1/session',
      { 'x-capstan-session': 'cookie' },
      {
        username: 'admin',
        password: ADMIN_PASSWORD,
      },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['expiresAt']);
    const cookies = cookiesOf(res);
    const s = cookies.get('capstan_session')!;
    expect(s).toMatch(/HttpOnly/);
    expect(s).toMatch(/SameSite=Strict/);
    expect(cookies.get('capstan_csrf')).not.toMatch(/HttpOnly/);
    session = valueOf(s);
    csrf = valueOf(cookies.get('capstan_csrf')!);
    expect(csrf).toBe(csrfTokenOf(session));
    // Without the header the token is in the body as before (CLI, scripts).
    const plain = await call('POST', '/api/v1/session', {}, { username: 'admin', password: ADMIN_PASSWORD });
    expect(((await plain.json()) as { token?: string }).token).toMatch(/\./);
    expect(plain.headers.getSetCookie()).toEqual([]);
  });

  it('reads with the cookie; a state-changing call needs the CSRF header of that session', async () => {
    const who = await call('GET', '/api/v1/session/userinfo', withCookie());
    expect(await who.json()).toMatchObject({ loggedIn: true, username: 'admin' });
    const project = { metadata: { name: 'web' }, spec: { sourceRepos: ['*'] } };
    const missing = await call('POST', '/api/v1/projects', withCookie(), { project });
    expect(missing.status).toBe(403);
    expect(((await missing.json()) as { message: string }).message).toMatch(/x-capstan-csrf/);
    const forged = await call(
      'POST',
      '/api/v1/projects',
      withCookie({ 'x-capstan-csrf': csrfTokenOf('other') }),
      {
        project,
      },
    );
    expect(forged.status).toBe(403);
    const ok = await call('POST', '/api/v1/projects', withCookie({ 'x-capstan-csrf': csrf }), { project });
    expect(ok.status).toBe(200);
    const audit = await httpClient(h)('GET', '/api/v1/audit/access_decisions?limit=500', admin);
    expect(JSON.stringify(audit.body)).toMatch(/x-capstan-csrf/);
  });

  it('takes only a session token from the cookie, and an Authorization header wins over it', async () => {
    const created = await httpClient(h)('POST', '/api/v1/account/admin/token', admin, { id: 'ui-test' });
    const apiToken = created.body.token as string;
    const asCookie = await call('GET', '/api/v1/session/userinfo', { cookie: `capstan_session=${apiToken}` });
    expect(asCookie.status).toBe(401);
    const bad = await call(
      'GET',
      '/api/v1/session/userinfo',
      withCookie({ authorization: 'Bearer not.a.token' }),
    );
    expect(bad.status).toBe(401);
  });

  it('streams an Application: the first state, then each change an event on the bus makes', async () => {
    const ctl = new AbortController();
    const res = await fetch(`${h.httpUrl}/api/v1/stream/applications?name=guestbook`, {
      headers: withCookie(),
      signal: ctl.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const until = async (re: RegExp) => {
      const deadline = Date.now() + 15_000;
      while (!re.test(text)) {
        if (Date.now() > deadline) throw new Error(`no ${re} in ${text.slice(0, 500)}`);
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        text += decoder.decode(value, { stream: true });
      }
    };
    await until(/"type":"ADDED".*"name":"guestbook"/);
    await sync.publish(
      newEvent(
        syncStatusChanged.type,
        {
          application: { name: 'guestbook', namespace: 'argocd' },
          sync: { status: 'OutOfSync', revision: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678' },
          health: { status: 'Progressing', message: 'rolling out' },
          resources: [],
          reconciledAt: '2026-11-26T03:00:00.000Z',
        },
        { subject: 'applications/argocd/guestbook', actor: 'service:sync', source: 'capstan/sync' },
      ),
    );
    await until(/"type":"MODIFIED".*"Progressing"/);
    ctl.abort();
  });

  it('refuses the stream to a caller without the right, and to no caller', async () => {
    const carol = await h.login('carol', 'carol-password-0');
    const denied = await call('GET', '/api/v1/stream/applications?name=guestbook', {
      authorization: `Bearer ${carol}`,
    });
    expect(denied.status).toBe(403);
    expect((await call('GET', '/api/v1/stream/applications?name=guestbook')).status).toBe(401);
  });

  it('serves the UI: hashed files cached for a year, index.html never, the SPA fallback outside /api', async () => {
    const asset = await call('GET', '/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    for (const path of ['/', '/applications/argocd/guestbook']) {
      const page = await call('GET', path);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<title>Capstan/);
      expect(page.headers.get('cache-control')).toBe('no-cache');
      expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    }
    const api = await call('GET', '/api/v1/nothing-here');
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('logs out with the cookie: the token is revoked and the cookies cleared', async () => {
    const out = await call('DELETE', '/api/v1/session', withCookie({ 'x-capstan-csrf': csrf }));
    expect(out.status).toBe(200);
    expect(cookiesOf(out).get('capstan_session')).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect((await call('GET', '/api/v1/session/userinfo', withCookie())).status).toBe(401);
  });
});
