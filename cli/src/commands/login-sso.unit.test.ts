import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { apiv1 } from '@capstan/proto';
import { CliError } from '../errors.js';
import { receiveCode, secondsLeft, ssoAuthorizationRequest } from './login-sso.js';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

const config = apiv1.SsoConfig.fromPartial({
  enabled: true,
  name: 'Dex',
  issuer: 'http://127.0.0.1:5556/dex',
  clientId: 'capstan-cli',
  scopes: ['openid', 'groups'],
  authorizationEndpoint: 'http://127.0.0.1:5556/dex/auth?connector_id=local',
  idTokenClaims: '{"groups":{"essential":true}}',
});

describe('capstan login --sso', () => {
  it('builds the authorization request: code flow, PKCE S256, state and nonce, the loopback redirect', () => {
    const r = ssoAuthorizationRequest(config, 8085);
    const q = new URL(r.url).searchParams;
    expect(r.url.startsWith('http://127.0.0.1:5556/dex/auth?')).toBe(true);
    expect(q.get('connector_id')).toBe('local');
    expect(Object.fromEntries(q)).toMatchObject({
      response_type: 'code',
      client_id: 'capstan-cli',
      redirect_uri: 'http://127.0.0.1:8085/auth/callback',
      scope: 'openid groups',
      state: r.state,
      nonce: r.nonce,
      code_challenge: createHash('sha256').update(r.verifier).digest('base64url'),
      code_challenge_method: 'S256',
      claims: '{"id_token":{"groups":{"essential":true}}}',
    });
    expect(r.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(ssoAuthorizationRequest(config, 8085).state).not.toBe(r.state);
    expect(() => ssoAuthorizationRequest(apiv1.SsoConfig.fromPartial({ enabled: false }), 8085)).toThrow(
      'single sign-on is not configured on this server',
    );
  });

  it("receives the code of this login's state on 127.0.0.1, and nothing else", async () => {
    const port = await freePort();
    const code = receiveCode(port, 'the-state', 10_000);
    expect((await fetch(`http://127.0.0.1:${port}/elsewhere`)).status).toBe(404);
    const res = await fetch(`http://127.0.0.1:${port}/auth/callback?code=abc&state=the-state`);
    expect(res.status).toBe(200);
    expect(await code).toBe('abc');
  });

  it('ends the login on a foreign state, a provider error, a busy port or a timeout', async () => {
    const port = await freePort();
    // The outcome is awaited before the callback arrives: the rejection must have its handler by then.
    const foreign = expect(receiveCode(port, 'mine', 10_000)).rejects.toThrow('state mismatch');
    const answer = await fetch(`http://127.0.0.1:${port}/auth/callback?code=abc&state=theirs`);
    expect(answer.status).toBe(400);
    await foreign;

    const refused = expect(receiveCode(port, 'mine', 10_000)).rejects.toThrow(
      'the provider refused the login: access_denied',
    );
    await fetch(`http://127.0.0.1:${port}/auth/callback?error=access_denied&state=mine`);
    await refused;

    const first = expect(receiveCode(port, 'a', 2_000)).rejects.toBeInstanceOf(CliError);
    await expect(receiveCode(port, 'b', 2_000)).rejects.toThrow('choose another --sso-port');
    await first;
  });

  it('reads how long a session token has left, from its exp', () => {
    const jwt = (payload: object) => `x.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.y`;
    expect(secondsLeft(jwt({ exp: 1_000 }), 940_000)).toBe(60);
    expect(secondsLeft(jwt({ sub: 'a' }))).toBeUndefined();
    expect(secondsLeft('not-a-jwt')).toBeUndefined();
  });
});
