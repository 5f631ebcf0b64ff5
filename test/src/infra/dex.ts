// A real OpenID Connect provider for the single sign-on tests (api int tests, test/e2e): Dex (test/scripts/obtain-dex.sh builds
// it from its Go module), on loopback, with in-memory storage, the static password connector
// (users with groups) and one static client. `browserLogin` drives Dex's own login pages over HTTP
// as a browser would (follow redirects, post the password form) and returns the redirect to the
// client with the authorization code: no imitation of a provider anywhere.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { obtainedTool } from './tools.js';

/** bcrypt of "password" (Dex's own example configuration). */
const PASSWORD_HASH = '$2a$10$2b2cU8CPhOTaGrs1HRQuAueS7JTT5ZHsHSzYiFPm1leZck7Mc8T4W';
export const DEX_PASSWORD = 'password';
/** The static client's secret (known before Dex starts: the api is configured with it first). */
export const DEX_CLIENT_SECRET = 'capstan-dex-client-secret-0123456789';

export interface DexUser {
  email: string;
  username: string;
  userID: string;
  groups: string[];
}

export interface Dex {
  issuer: string;
  clientId: string;
  clientSecret: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export function dexBinary(): string {
  return obtainedTool('obtain-dex.sh');
}

/**
 * Dex's configuration for Capstan's tests and the `npm run up` story (one shape for both): loopback,
 * in-memory storage, the static password connector (`hash` is bcrypt) and one static client.
 */
export function dexConfig(opts: {
  port: number;
  users: (DexUser & { hash: string })[];
  client: { id: string; secret: string };
  redirectURIs: string[];
}) {
  return {
    issuer: `http://127.0.0.1:${opts.port}/dex`,
    storage: { type: 'memory' },
    web: { http: `127.0.0.1:${opts.port}` },
    logger: { level: 'warn' },
    oauth2: { skipApprovalScreen: true, responseTypes: ['code'] },
    expiry: { idTokens: '1h' },
    enablePasswordDB: true,
    staticPasswords: opts.users,
    staticClients: [
      { id: opts.client.id, secret: opts.client.secret, name: 'Capstan', redirectURIs: opts.redirectURIs },
    ],
  };
}

export async function startDex(opts: { redirectURIs: string[]; users: DexUser[] }): Promise<Dex> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-dex-'));
  const client = { id: 'capstan', secret: DEX_CLIENT_SECRET };
  const config = dexConfig({
    port,
    users: opts.users.map((u) => ({ ...u, hash: PASSWORD_HASH })),
    client,
    redirectURIs: opts.redirectURIs,
  });
  const issuer = config.issuer;
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(config));
  const proc: ChildProcess = spawn(dexBinary(), ['serve', path.join(dir, 'config.json')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`dex exited (${proc.exitCode}): ${stderr}`);
    const ok = await fetch(`${issuer}/.well-known/openid-configuration`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`dex did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    issuer,
    clientId: client.id,
    clientSecret: client.secret,
    stop: async () => {
      if (proc.exitCode === null) {
        proc.kill('SIGTERM');
        await new Promise((r) => proc.once('exit', r));
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#34;|&quot;/g, '"')
    .replace(/&#39;/g, "'");

/**
 * A browser at `start` (an authorization URL, or anything that redirects to one): follows
 * redirects, posts `email`/`password` to Dex's login form, and stops at the first redirect whose
 * URL starts with `stopAt` (the client's redirect URI), which it returns. `cookies` is the jar
 * (name → value) the browser keeps across the hosts it visits.
 */
export async function browserLogin(
  start: string,
  stopAt: string,
  email: string,
  password: string,
  cookies = new Map<string, string>(),
): Promise<string> {
  let url = start;
  let method = 'GET';
  let body: URLSearchParams | undefined;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(stopAt)) return url;
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      ...(body ? { body } : {}),
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair = ''] = c.split(';');
      const i = pair.indexOf('=');
      cookies.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
    }
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url).toString();
      method = 'GET';
      body = undefined;
      continue;
    }
    const html = await res.text();
    const form = /<form[^>]*method="post"[^>]*action="([^"]*)"/i.exec(html);
    if (res.status !== 200 || !form || !/name="password"/.test(html))
      throw new Error(`unexpected page at ${url} (HTTP ${res.status}): ${html.slice(0, 300)}`);
    if (method === 'POST') throw new Error(`the login form came back (wrong password?) at ${url}`);
    url = new URL(unescapeHtml(form[1]!) || url, url).toString();
    method = 'POST';
    body = new URLSearchParams({ login: email, password });
  }
  throw new Error(`too many redirects from ${start}`);
}
