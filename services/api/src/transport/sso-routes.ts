// The web UI's single sign-on (docs/sso.md): GET /auth/login sends the browser to the OIDC provider
// with a sealed state cookie (HttpOnly, SameSite=Lax so that it comes back on the provider's
// redirect, path /auth/callback, 10 minutes); GET /auth/callback checks state against that cookie,
// lets the api exchange the code and verify the ID token, sets the UI's session cookies
// (session-cookie.ts) and returns to the page the login started from. A small page does the last
// step (not a 302) so that the browser sends the SameSite=Strict session cookie on it: a redirect
// chain that began at the provider counts as cross-site. When the provider gives a refresh token,
// the callback also sets it as an HttpOnly cookie sent only to POST /auth/refresh, which the UI
// calls while it is open: near the session's end (or once the session cookie is gone) the api asks
// the provider again and renews the session, CSRF and refresh cookies (each refresh token works once).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UnauthenticatedError, type Logger } from '@capstan/service';
import type { ApiServices } from '../services.js';
import type { RequestContext } from '../support/request.js';
import { toHttpError } from './errors.js';
import {
  parseCookies,
  REFRESH_COOKIE,
  refreshCookie,
  SESSION_COOKIE,
  SESSION_MODE_HEADER,
  setSessionCookies,
} from './session-cookie.js';
import { REFRESH_TTL_SECONDS } from '../sso/sso-tokens.js';
import type { SsoSession } from '../sso/sso.service.js';

export const STATE_COOKIE = 'capstan_oidc_state';
const ANONYMOUS = { name: 'anonymous', groups: [], kind: 'user' } as const;

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function stateCookie(req: FastifyRequest, value: string, maxAge: number): string {
  const secure = req.protocol === 'https' ? ['Secure'] : [];
  return [
    `${STATE_COOKIE}=${value}`,
    'Path=/auth/callback',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${maxAge}`,
    ...secure,
  ].join('; ');
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function page(reply: FastifyReply, status: number, title: string, body: string, refreshTo?: string) {
  const meta = refreshTo ? `<meta http-equiv="refresh" content="0;url=${escapeHtml(refreshTo)}">` : '';
  return reply
    .status(status)
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'")
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html><head><meta charset="utf-8">${meta}<title>${escapeHtml(title)}</title></head><body><p>${escapeHtml(body)}</p></body></html>`,
    );
}

/** The session, CSRF and (with a provider refresh token) refresh cookies of a single sign-on session. */
function setWebSession(req: FastifyRequest, reply: FastifyReply, session: SsoSession): void {
  setSessionCookies(req, reply, session.token, session.expiresAt.toISOString());
  if (session.refreshToken)
    void reply.header('set-cookie', refreshCookie(req, session.refreshToken, REFRESH_TTL_SECONDS));
}

/** A session with less than this left is renewed (half of it for short sessions). */
const renewBeforeSeconds = (ttl: number) => Math.min(300, ttl / 2);

/**
 * POST /auth/refresh (the UI, with `X-Capstan-Session: cookie`: a header a cross-site form cannot
 * send). A session with time left answers its expiry; near its end, or gone, the refresh cookie
 * renews it. A refused refresh clears the refresh cookie only when no valid session remains (two
 * tabs may race: the loser's session cookie is already the winner's).
 */
async function refreshWebSession(
  req: FastifyRequest,
  reply: FastifyReply,
  services: ApiServices,
  ctx: RequestContext,
): Promise<{ expiresAt: string; renewed: boolean }> {
  const cookies = parseCookies(req.headers.cookie);
  const current = await services.authn
    .authenticate(undefined, { cookie: { token: cookies.get(SESSION_COOKIE) ?? '', csrfVerified: true } })
    .catch(() => undefined);
  const left = current?.tokenExpiresAt ? (current.tokenExpiresAt.getTime() - Date.now()) / 1000 : 0;
  const refresh = cookies.get(REFRESH_COOKIE);
  const ttl = services.sso.sessionTtlSeconds;
  if (current && (!current.sso || !refresh || left > renewBeforeSeconds(ttl)))
    return { expiresAt: current.tokenExpiresAt!.toISOString(), renewed: false };
  if (!refresh) throw new UnauthenticatedError('no session to renew: log in again');
  try {
    const session = await services.sso.refresh(ctx, refresh);
    setWebSession(req, reply, session);
    return { expiresAt: session.expiresAt.toISOString(), renewed: true };
  } catch (err) {
    if (!current) void reply.header('set-cookie', refreshCookie(req, '', 0));
    throw err;
  }
}

export function registerSsoRoutes(app: FastifyInstance, services: ApiServices, logger: Logger): void {
  app.post('/auth/refresh', async (req, reply) => {
    void reply.header('cache-control', 'no-store');
    try {
      if (req.headers[SESSION_MODE_HEADER] !== 'cookie')
        throw new UnauthenticatedError(`/auth/refresh needs the ${SESSION_MODE_HEADER}: cookie header`);
      const ctx: RequestContext = { principal: ANONYMOUS, via: 'http', peer: req.ip };
      return reply.status(200).send(await refreshWebSession(req, reply, services, ctx));
    } catch (err) {
      const e = toHttpError(err, logger);
      return reply.status(e.status).send(e.body);
    }
  });

  app.get('/auth/login', async (req, reply) => {
    try {
      const q = req.query as Record<string, unknown>;
      const { location, stateCookie: sealed } = await services.sso.startWebLogin(str(q.return_url));
      return reply
        .header('set-cookie', stateCookie(req, sealed, 600))
        .header('cache-control', 'no-store')
        .redirect(location, 302);
    } catch (err) {
      const e = toHttpError(err, logger);
      return page(reply, e.status, 'Single sign-on', e.body.message);
    }
  });

  app.get('/auth/callback', async (req, reply) => {
    const ctx: RequestContext = { principal: ANONYMOUS, via: 'http', peer: req.ip };
    const q = req.query as Record<string, unknown>;
    void reply.header('set-cookie', stateCookie(req, '', 0));
    try {
      const { session, returnUrl } = await services.sso.finishWebLogin(
        ctx,
        { code: str(q.code), state: str(q.state), error: str(q.error) },
        parseCookies(req.headers.cookie).get(STATE_COOKIE),
      );
      // Fastify appends set-cookie headers: the cleared state cookie and the session's both go.
      setWebSession(req, reply, session);
      return page(reply, 200, 'Logged in', `Logged in as ${session.username}.`, returnUrl);
    } catch (err) {
      const e = toHttpError(err, logger);
      return page(reply, e.status, 'Single sign-on failed', e.body.message);
    }
  });
}
