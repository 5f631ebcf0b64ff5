// The browser's session: the UI logs in with `X-Capstan-Session: cookie` and gets the session token
// in an HttpOnly, SameSite=Strict cookie instead of the response body, so no script ever reads it.
// State-changing calls made with that cookie carry the CSRF token in a header (double submit): the
// token is a digest of the session token, readable by the page in its own cookie and checked here
// against the session cookie, so it cannot be forged without the session and cannot be replayed
// with another session. A call with an Authorization header ignores the cookie entirely.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallCredentials } from '../auth/authenticator.js';

export const SESSION_COOKIE = 'capstan_session';
export const CSRF_COOKIE = 'capstan_csrf';
export const CSRF_HEADER = 'x-capstan-csrf';
export const SESSION_MODE_HEADER = 'x-capstan-session';

export function csrfTokenOf(sessionToken: string): string {
  return createHash('sha256').update(`capstan-csrf\0${sessionToken}`).digest('base64url');
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const name = part.slice(0, i).trim();
    // The first cookie of a name wins, as in browsers' ordering (longest path first).
    if (!out.has(name)) out.set(name, part.slice(i + 1).trim());
  }
  return out;
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session cookie of a call without an Authorization header, and whether its CSRF header holds. */
export function cookieCredentials(req: FastifyRequest): CallCredentials['cookie'] {
  if (req.headers.authorization !== undefined) return undefined;
  const token = parseCookies(req.headers.cookie).get(SESSION_COOKIE);
  if (!token) return undefined;
  if (SAFE_METHODS.has(req.method)) return { token, csrfVerified: true };
  const header = req.headers[CSRF_HEADER];
  return { token, csrfVerified: typeof header === 'string' && sameToken(header, csrfTokenOf(token)) };
}

function cookie(name: string, value: string, attrs: string[]): string {
  return [`${name}=${value}`, 'Path=/', 'SameSite=Strict', ...attrs].join('; ');
}

/** Secure when the api itself serves TLS; on plain HTTP (a loopback install) browsers would drop it. */
const secureAttr = (req: FastifyRequest) => (req.protocol === 'https' ? ['Secure'] : []);

export function setSessionCookies(
  req: FastifyRequest,
  reply: FastifyReply,
  token: string,
  expiresAt: string,
) {
  const expires = `Expires=${new Date(expiresAt).toUTCString()}`;
  void reply.header('set-cookie', [
    cookie(SESSION_COOKIE, token, ['HttpOnly', expires, ...secureAttr(req)]),
    cookie(CSRF_COOKIE, csrfTokenOf(token), [expires, ...secureAttr(req)]),
  ]);
}

export function clearSessionCookies(req: FastifyRequest, reply: FastifyReply) {
  const gone = 'Expires=Thu, 01 Jan 1970 00:00:00 GMT';
  void reply.header('set-cookie', [
    cookie(SESSION_COOKIE, '', ['HttpOnly', gone, ...secureAttr(req)]),
    cookie(CSRF_COOKIE, '', [gone, ...secureAttr(req)]),
    refreshCookie(req, '', 0),
  ]);
}

/**
 * A single sign-on session's refresh token in the browser (docs/sso.md): HttpOnly, SameSite=Strict,
 * sent only to POST /auth/refresh (transport/sso-routes.ts), never readable by a script.
 */
export const REFRESH_COOKIE = 'capstan_refresh';
export const REFRESH_PATH = '/auth/refresh';

export function refreshCookie(req: FastifyRequest, value: string, maxAgeSeconds: number): string {
  return [
    `${REFRESH_COOKIE}=${value}`,
    `Path=${REFRESH_PATH}`,
    'SameSite=Strict',
    'HttpOnly',
    `Max-Age=${maxAgeSeconds}`,
    ...secureAttr(req),
  ].join('; ');
}

/**
 * The response of a login asked for as a cookie session (the token leaves only as the cookie) and
 * of a logout made with the cookie (the cookies are cleared); any other response as it is.
 */
export function cookieSessionView(opName: string, req: FastifyRequest, reply: FastifyReply, view: unknown) {
  if (opName === 'SessionService.Create' && req.headers[SESSION_MODE_HEADER] === 'cookie') {
    const { token, expiresAt } = view as { token: string; expiresAt: string };
    setSessionCookies(req, reply, token, expiresAt);
    return { expiresAt };
  }
  if (opName === 'SessionService.Delete' && cookieCredentials(req) !== undefined)
    clearSessionCookies(req, reply);
  return view;
}

/** The header parameter in the OpenAPI document of the login operation. */
export const sessionModeParameter = {
  name: SESSION_MODE_HEADER,
  in: 'header',
  required: false,
  description: '"cookie": the session token is set as an HttpOnly cookie and left out of the response',
  schema: { type: 'string', enum: ['cookie'] },
};
