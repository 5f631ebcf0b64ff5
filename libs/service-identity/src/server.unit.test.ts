import { describe, expect, it } from 'vitest';
import { Metadata } from '@grpc/grpc-js';
import { PermissionDeniedError, UnauthenticatedError } from '@capstan/service';
import {
  DelegationIssuer,
  DelegationVerifier,
  delegationPrivateKey,
  delegationPublicKeys,
  generateDelegationKeyPair,
} from './delegation.js';
import { ServiceTokens } from './service-tokens.js';
import { authenticateCall } from './server.js';
import { peerService } from './tls.js';

const T = { api: 'a'.repeat(40), sync: 's'.repeat(40), appset: 'p'.repeat(40) };
const tokens = new ServiceTokens(
  Object.entries(T)
    .map(([s, t]) => `${s}=${t}`)
    .join(','),
);
const pair = generateDelegationKeyPair();
const issuer = new DelegationIssuer(delegationPrivateKey(pair.privateKeyPem));
const auth = {
  tokens,
  delegations: new DelegationVerifier(delegationPublicKeys(pair.publicKeyPem), 'repo'),
  requireCertificate: true,
};

function md(token: string | undefined, extra: Record<string, string> = {}): Metadata {
  const m = new Metadata();
  if (token) m.set('authorization', `Bearer ${token}`);
  for (const [k, v] of Object.entries(extra)) m.set(k, v);
  return m;
}
const call = (m: Metadata, peer: string | undefined, allowed = ['api', 'sync', 'appset']) =>
  authenticateCall(auth, m, peer, allowed, 'listFiles');

describe('authenticateCall', () => {
  it('identifies a service by its token on a connection with its own certificate', async () => {
    await expect(call(md(T.sync), 'sync')).resolves.toEqual({ service: 'sync', actor: 'service:sync' });
  });

  it('refuses no token, an unknown token, and a token without the matching certificate', async () => {
    await expect(call(md(undefined), 'sync')).rejects.toThrow(UnauthenticatedError);
    await expect(call(md('x'.repeat(40)), 'sync')).rejects.toThrow(UnauthenticatedError);
    await expect(call(md(T.appset), undefined)).rejects.toThrow(/client certificate/);
    await expect(call(md(T.appset), 'sync')).rejects.toThrow(/certificate of service sync/);
  });

  it('refuses a service the method does not allow', async () => {
    await expect(call(md(T.sync), 'sync', ['api'])).rejects.toThrow(PermissionDeniedError);
  });

  it('acts for a user only with a delegation issued to the calling service for this receiver', async () => {
    const forApi = await issuer.mint({ user: 'alice', holder: 'api', audience: 'repo' });
    await expect(call(md(T.api, { 'capstan-delegation': forApi }), 'api')).resolves.toMatchObject({
      service: 'api',
      actor: 'user:alice via service:api',
      delegation: { user: 'alice', kind: 'user' },
    });
    // The appset's identity with a delegation minted for the api: refused.
    await expect(call(md(T.appset, { 'capstan-delegation': forApi }), 'appset')).rejects.toThrow(
      PermissionDeniedError,
    );
    // A delegation for another audience: refused.
    const forApiAudience = await issuer.mint({ user: 'alice', holder: 'appset', audience: 'api' });
    await expect(call(md(T.appset, { 'capstan-delegation': forApiAudience }), 'appset')).rejects.toThrow(
      /not for repo/,
    );
    // The delegation alone (no service identity): refused.
    await expect(call(md(undefined, { 'capstan-delegation': forApi }), undefined)).rejects.toThrow(
      UnauthenticatedError,
    );
  });

  it('refuses a self-declared actor or on-behalf-of, whoever sends it', async () => {
    await expect(call(md(T.api, { 'x-capstan-actor': 'user:admin' }), 'api')).rejects.toThrow(/delegation/);
    await expect(call(md(T.appset, { 'capstan-on-behalf-of': 'admin' }), 'appset')).rejects.toThrow(
      PermissionDeniedError,
    );
  });
});

describe('peerService', () => {
  const ctx = (san: string | undefined) => ({
    getAuthContext: () => ({ sslPeerCertificate: san === undefined ? undefined : { subjectaltname: san } }),
  });
  it('reads exactly one spiffe://capstan/<service> URI', () => {
    expect(peerService(ctx('DNS:repo, URI:spiffe://capstan/repo, IP Address:127.0.0.1'))).toBe('repo');
    expect(peerService(ctx('DNS:repo'))).toBeUndefined();
    expect(peerService(ctx('URI:spiffe://capstan/a, URI:spiffe://capstan/b'))).toBeUndefined();
    expect(peerService(ctx(undefined))).toBeUndefined();
    expect(peerService({})).toBeUndefined();
  });
});

describe('ServiceTokens', () => {
  it('refuses short tokens and malformed pairs without echoing the token', () => {
    expect(() => new ServiceTokens('sync=short')).toThrow(/at least 32/);
    expect(() => new ServiceTokens('=' + 'x'.repeat(40))).toThrow(/service=token/);
    try {
      new ServiceTokens('sync=secret-value');
    } catch (err) {
      expect(String((err as Error).message)).not.toContain('secret-value');
    }
  });
});
