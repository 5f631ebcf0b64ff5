// The one HTTP client of the UI: openapi-fetch over the types generated from the api's OpenAPI
// document (src/gen/api.ts), so every path, parameter and body is checked against the operation
// table. The session travels in an HttpOnly cookie the script never sees; a state-changing call
// carries the CSRF token (double submit: the readable capstan_csrf cookie, echoed in a header the
// api compares with the session it belongs to).
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../gen/api';
import { ApiError, type ErrorBody } from './errors';

export const CSRF_COOKIE = 'capstan_csrf';
export const CSRF_HEADER = 'x-capstan-csrf';

export function readCookie(name: string, cookies = typeof document === 'undefined' ? '' : document.cookie) {
  for (const part of cookies.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method === 'GET' || request.method === 'HEAD') return request;
    const token = readCookie(CSRF_COOKIE);
    if (token) request.headers.set(CSRF_HEADER, token);
    return request;
  },
};

export function makeClient(baseUrl = '') {
  const client = createClient<paths>({ baseUrl, credentials: 'same-origin' });
  client.use(csrf);
  return client;
}

export const api = makeClient(typeof window === 'undefined' ? 'http://localhost' : window.location.origin);

/** The data of an openapi-fetch result, or its error as an ApiError (status, code, field details). */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok) return result.data as T;
  throw new ApiError(result.response.status, result.error as ErrorBody | undefined);
}
