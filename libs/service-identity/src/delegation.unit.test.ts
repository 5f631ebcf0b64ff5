import { describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { createPrivateKey } from 'node:crypto';
import { PermissionDeniedError, UnauthenticatedError } from '@capstan/service';
import {
  DelegationIssuer,
  DelegationVerifier,
  delegationPrivateKey,
  delegationPublicKeys,
  generateDelegationKeyPair,
} from './delegation.js';

const pair = generateDelegationKeyPair();
const issuer = new DelegationIssuer(delegationPrivateKey(pair.privateKeyPem));
const repo = new DelegationVerifier(delegationPublicKeys(pair.publicKeyPem), 'repo');

describe('delegations', () => {
  it('is accepted by its audience from its holder, naming the user', async () => {
    const token = await issuer.mint({ user: 'alice', holder: 'api', audience: 'repo' });
    const d = await repo.verify(token, 'api');
    expect(d).toMatchObject({ user: 'alice', holder: 'api', audience: 'repo', kind: 'user' });
    expect(d.expiresAt.getTime()).toBeGreaterThan(Date.now());
  });

  it("carries a single sign-on user's groups (a user's, or an owner's as last verified)", async () => {
    const token = await issuer.mint({ user: 'sso-sub', holder: 'api', audience: 'repo', groups: ['devs'] });
    expect(await repo.verify(token, 'api')).toMatchObject({ user: 'sso-sub', groups: ['devs'] });
    expect(
      (await repo.verify(await issuer.mint({ user: 'a', holder: 'api', audience: 'repo' }), 'api')).groups,
    ).toBeUndefined();
    const owner = await issuer.mint({
      user: 'a',
      holder: 'api',
      audience: 'repo',
      kind: 'owner',
      resource: 'x',
      groups: ['devs'],
    });
    expect(await repo.verify(owner, 'api')).toMatchObject({ kind: 'owner', resource: 'x', groups: ['devs'] });
    const forged = await new SignJWT({
      hld: 'api',
      kind: 'owner',
      res: 'applicationsets/argocd/x',
      grp: 'admins',
    })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'capstan-delegation+jwt' })
      .setIssuer('capstan-api')
      .setSubject('a')
      .setAudience('repo')
      .setJti('j')
      .setIssuedAt()
      .setExpirationTime('60s')
      .sign(delegationPrivateKey(pair.privateKeyPem));
    await expect(repo.verify(forged, 'api')).rejects.toThrow('invalid delegation');
  });

  it('is refused when presented by another service than its holder', async () => {
    const token = await issuer.mint({ user: 'alice', holder: 'api', audience: 'repo' });
    await expect(repo.verify(token, 'appset')).rejects.toThrow(PermissionDeniedError);
  });

  it('is refused by a service that is not its audience', async () => {
    const token = await issuer.mint({ user: 'alice', holder: 'appset', audience: 'api' });
    await expect(repo.verify(token, 'appset')).rejects.toThrow(/not for repo/);
  });

  it('is refused once expired', async () => {
    const key = createPrivateKey(pair.privateKeyPem);
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ hld: 'api', kind: 'user' })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'capstan-delegation+jwt' })
      .setIssuer('capstan-api')
      .setSubject('alice')
      .setAudience('repo')
      .setJti('x')
      .setIssuedAt(now - 120)
      .setExpirationTime(now - 60)
      .sign(key);
    await expect(repo.verify(token, 'api')).rejects.toThrow(/expired/);
  });

  it('is refused when signed by another key (a service cannot mint its own)', async () => {
    const other = new DelegationIssuer(delegationPrivateKey(generateDelegationKeyPair().privateKeyPem));
    const token = await other.mint({ user: 'admin', holder: 'api', audience: 'repo' });
    await expect(repo.verify(token, 'api')).rejects.toThrow(UnauthenticatedError);
  });

  it('accepts either key during a rotation', async () => {
    const next = generateDelegationKeyPair();
    const both = new DelegationVerifier(delegationPublicKeys(pair.publicKeyPem + next.publicKeyPem), 'repo');
    const token = await new DelegationIssuer(delegationPrivateKey(next.privateKeyPem)).mint({
      user: 'alice',
      holder: 'api',
      audience: 'repo',
    });
    await expect(both.verify(token, 'api')).resolves.toMatchObject({ user: 'alice' });
  });

  it('refuses lifetimes outside the bounds and owner delegations without a resource', async () => {
    await expect(
      issuer.mint({ user: 'a', holder: 'api', audience: 'repo', ttlSeconds: 3600 }),
    ).rejects.toThrow(/ttlSeconds/);
    await expect(
      issuer.mint({ user: 'a', holder: 'appset', audience: 'api', kind: 'owner' }),
    ).rejects.toThrow(/resource/);
  });

  it('refuses a token that is not a delegation (a session JWT, garbage)', async () => {
    await expect(repo.verify('a.b.c', 'api')).rejects.toThrow(UnauthenticatedError);
    const key = createPrivateKey(pair.privateKeyPem);
    const untyped = await new SignJWT({ hld: 'api', kind: 'user' })
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer('capstan-api')
      .setSubject('alice')
      .setAudience('repo')
      .setJti('x')
      .setIssuedAt()
      .setExpirationTime('60s')
      .sign(key);
    await expect(repo.verify(untyped, 'api')).rejects.toThrow(UnauthenticatedError);
  });

  it('refuses keys that are not Ed25519', () => {
    expect(() => delegationPublicKeys('nothing')).toThrow(/Ed25519/);
  });
});
