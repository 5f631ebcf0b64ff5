// capstan login <server> --sso: OpenID Connect authorization code + PKCE through the browser, as
// `argocd login --sso`. The CLI asks the api which provider and client to use, prints the
// authorization URL to open, receives the code on a listener on 127.0.0.1:<--sso-port> (Argo's
// default 8085) at /auth/callback, checks the state, and hands code, PKCE verifier and nonce to the
// api, which exchanges the code, verifies the ID token and returns Capstan's own session (and a
// refresh token when the provider gave one: scope offline_access). The provider's tokens never
// reach the CLI.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { apiv1 } from '@capstan/proto';
import { CliError } from '../errors.js';

export interface SsoRequest {
  url: string;
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
}

const random = () => randomBytes(32).toString('base64url');

/** The authorization request (pure but for its random values). */
export function ssoAuthorizationRequest(cfg: apiv1.SsoConfig, port: number): SsoRequest {
  if (!cfg.enabled)
    throw new CliError('single sign-on is not configured on this server (argocd-cm oidc.config)');
  const r = {
    state: random(),
    nonce: random(),
    verifier: random(),
    redirectUri: `http://127.0.0.1:${port}/auth/callback`,
  };
  const url = new URL(cfg.authorizationEndpoint);
  const q = url.searchParams;
  q.set('response_type', 'code');
  q.set('client_id', cfg.clientId);
  q.set('redirect_uri', r.redirectUri);
  q.set('scope', cfg.scopes.join(' '));
  q.set('state', r.state);
  q.set('nonce', r.nonce);
  q.set('code_challenge', createHash('sha256').update(r.verifier).digest('base64url'));
  q.set('code_challenge_method', 'S256');
  if (cfg.idTokenClaims)
    q.set('claims', JSON.stringify({ id_token: JSON.parse(cfg.idTokenClaims) as unknown }));
  return { ...r, url: url.toString() };
}

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Listens on 127.0.0.1:`port` until the provider redirects the browser to /auth/callback with
 * this login's state; resolves with the code. Other requests get 404; a wrong state or an error
 * from the provider ends the login.
 */
export function receiveCode(port: number, state: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let server: Server | undefined = undefined;
    const done = (err: Error | undefined, code?: string) => {
      clearTimeout(timer);
      server?.close();
      server?.closeAllConnections();
      if (err) reject(err);
      else resolve(code!);
    };
    const timer = setTimeout(
      () => done(new CliError(`no login within ${Math.round(timeoutMs / 1000)} s`)),
      timeoutMs,
    );
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
      if (url.pathname !== '/auth/callback') {
        res.writeHead(404).end();
        return;
      }
      const error = url.searchParams.get('error');
      const code = url.searchParams.get('code');
      const ok = !error && code && sameText(url.searchParams.get('state') ?? '', state);
      res.writeHead(ok ? 200 : 400, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(ok ? 'Logged in: you may close this window and return to the terminal.\n' : 'Login failed.\n');
      if (error) done(new CliError(`the provider refused the login: ${error.slice(0, 64)}`));
      else if (!ok) done(new CliError('the callback does not belong to this login (state mismatch)'));
      else done(undefined, code);
    });
    server.once('error', (err: NodeJS.ErrnoException) =>
      done(
        new CliError(
          `cannot listen on 127.0.0.1:${port} (${err.code ?? err.message}): choose another --sso-port`,
        ),
      ),
    );
    server.listen(port, '127.0.0.1');
  });
}

/** Seconds until a JWT expires (its `exp`), or undefined when it has none or is not a JWT. */
export function secondsLeft(token: string, now = Date.now()): number | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
      exp?: unknown;
    };
    return typeof payload.exp === 'number' ? payload.exp - now / 1000 : undefined;
  } catch {
    return undefined;
  }
}
