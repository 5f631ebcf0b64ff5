// Single sign-on against a real Dex (test/scripts/obtain-dex.sh) for the api's int tests: the
// argocd-cm / argocd-rbac-cm / argocd-secret objects that configure it, and the two logins as the
// CLI and a browser do them (HTTP only, Dex's own login form).
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { apiv1 } from '@capstan/proto';
import { browserLogin, DEX_CLIENT_SECRET, DEX_PASSWORD } from '@capstan/test/infra';
import { unary, type Harness } from './harness.js';

type Clients = ReturnType<Harness['clients']>;

export const configMap = (name: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: ${name}, namespace: argocd }\ndata:\n${Object.entries(
    data,
  )
    .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
    .join('\n')}\n`;

/** argocd-cm's url and oidc.config (Dex, offline_access), the client secret, and argocd-rbac-cm. */
export function ssoManifests(h: Harness, issuer: string, policyCsv: string): string {
  return (
    configMap('argocd-cm', {
      url: h.httpUrl,
      'oidc.config': [
        'name: Dex',
        `issuer: ${issuer}`,
        'clientID: capstan',
        'clientSecret: $oidc.clientSecret',
        'requestedScopes: [openid, profile, email, groups, offline_access]',
      ].join('\n'),
    }) +
    '---\n' +
    `apiVersion: v1\nkind: Secret\nmetadata: { name: argocd-secret, namespace: argocd }\nstringData:\n  oidc.clientSecret: ${DEX_CLIENT_SECRET}\n` +
    '---\n' +
    configMap('argocd-rbac-cm', { 'policy.csv': policyCsv, scopes: '[groups, email]' })
  );
}

/** The CLI's side of the flow (cli/src/commands/login-sso.ts does the same), up to the code. */
export async function cliCode(c: Clients, cliRedirect: string, user: { email: string }) {
  const cfg = await unary(c.sessions.getSsoConfig.bind(c.sessions), {});
  const verifier = randomBytes(32).toString('base64url');
  const nonce = randomBytes(16).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const url = new URL(cfg.authorizationEndpoint);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: cfg.clientId,
    redirect_uri: cliRedirect,
    scope: cfg.scopes.join(' '),
    state,
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(k, v);
  const back = new URL(await browserLogin(url.toString(), cliRedirect, user.email, DEX_PASSWORD));
  expect(back.searchParams.get('state')).toBe(state);
  return { code: back.searchParams.get('code')!, verifier, nonce };
}

/** `capstan login --sso`: a session and a refresh token. */
export async function cliLogin(
  c: Clients,
  cliRedirect: string,
  user: { email: string },
): Promise<apiv1.SsoSessionResponse> {
  const { code, verifier, nonce } = await cliCode(c, cliRedirect, user);
  return unary(c.sessions.createSso.bind(c.sessions), {
    code,
    codeVerifier: verifier,
    redirectUri: cliRedirect,
    nonce,
  });
}

/** name → value of a response's set-cookie headers, and the headers themselves by name. */
export function setCookies(res: Response): { values: Map<string, string>; raw: Map<string, string> } {
  const values = new Map<string, string>();
  const raw = new Map<string, string>();
  for (const c of res.headers.getSetCookie()) {
    const pair = c.split(';')[0]!;
    const name = pair.slice(0, pair.indexOf('='));
    values.set(name, pair.slice(name.length + 1));
    raw.set(name, c);
  }
  return { values, raw };
}

/** A browser's web login (/auth/login → Dex → /auth/callback): the callback's response. */
export async function webLogin(h: Harness, user: { email: string }): Promise<Response> {
  const jar = new Map<string, string>();
  const start = await fetch(`${h.httpUrl}/auth/login?return_url=/applications`, { redirect: 'manual' });
  jar.set('capstan_oidc_state', setCookies(start).values.get('capstan_oidc_state')!);
  const callback = await browserLogin(
    start.headers.get('location')!,
    `${h.httpUrl}/auth/callback`,
    user.email,
    DEX_PASSWORD,
    jar,
  );
  return fetch(callback, {
    redirect: 'manual',
    headers: { cookie: `capstan_oidc_state=${jar.get('capstan_oidc_state')}` },
  });
}
