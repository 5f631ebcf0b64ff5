// The web UI's single sign-on (docs/sso.md): GET /auth/login sends the browser to the OIDC provider
// with a sealed state cookie (HttpOnly, SameSite=Lax so that it comes back on the provider's
// redirect, path /auth/callback, 10 minutes); GET /auth/callback checks state against that cookie,
// lets the api exchange the code and verify the ID token, sets the UI's session cookies
// (session-cookie.ts) and returns to the page the login started from. A small page does the last
// step (not a 302) so that the browser sends the SameSite=Strict session cookie on it: a redirect
// chain that began at the provider counts as cross-site.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '@capstan/service';
import type { ApiServices } from '../services.js';
import type { RequestContext } from '../support/request.js';
import { toHttpError } from './errors.js';
import { parseCookies, setSessionCookies } from './session-cookie.js';

export const STATE_COOKIE = 'capstan_oidc_state';

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

export function registerSsoRoutes(app: FastifyInstance, services: ApiServices, logger: Logger): void {
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
    const ctx: RequestContext = {
      principal: { name: 'anonymous', groups: [], kind: 'user' },
      via: 'http',
      peer: req.ip,
    };
    const q = req.query as Record<string, unknown>;
    void reply.header('set-cookie', stateCookie(req, '', 0));
    try {
      const { session, returnUrl } = await services.sso.finishWebLogin(
        ctx,
        { code: str(q.code), state: str(q.state), error: str(q.error) },
        parseCookies(req.headers.cookie).get(STATE_COOKIE),
      );
      // Fastify appends set-cookie headers: the cleared state cookie and the session's both go.
      setSessionCookies(req, reply, session.token, session.expiresAt.toISOString());
      return page(reply, 200, 'Logged in', `Logged in as ${session.username}.`, returnUrl);
    } catch (err) {
      const e = toHttpError(err, logger);
      return page(reply, e.status, 'Single sign-on failed', e.body.message);
    }
  });
}
