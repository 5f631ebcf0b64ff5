import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { PermissionDeniedError, UnauthenticatedError } from '@capstan/service';
import {
  DelegationIssuer,
  DelegationVerifier,
  delegationPrivateKey,
  delegationPublicKeys,
  generateDelegationKeyPair,
  ServiceTokens,
} from '@capstan/service-identity';
import { authenticateRepoCall } from './service-identity.js';

const api = 'a'.repeat(40);
const sync = 's'.repeat(40);
const keys = generateDelegationKeyPair();
const issuer = new DelegationIssuer(delegationPrivateKey(keys.privateKeyPem));
const auth = {
  tokens: new ServiceTokens(`api=${api}, sync=${sync}`),
  delegations: new DelegationVerifier(delegationPublicKeys(keys.publicKeyPem), 'repo'),
  requireCertificate: true,
};
const call = (peer: string | undefined, token?: string, extra: Record<string, string> = {}) => {
  const metadata = new Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  for (const [k, v] of Object.entries(extra)) metadata.set(k, v);
  return {
    metadata,
    getAuthContext: () => ({
      sslPeerCertificate: peer ? { subjectaltname: `URI:spiffe://capstan/${peer}` } : undefined,
    }),
  };
};

describe('repo service identity', () => {
  it('names the user only from a delegation the api minted for repo', async () => {
    const d = await issuer.mint({ user: 'alice', holder: 'api', audience: 'repo' });
    await expect(
      authenticateRepoCall(auth, call('api', api, { 'capstan-delegation': d }), 'getCredential'),
    ).resolves.toMatchObject({ service: 'api', actor: 'user:alice via service:api' });
    await expect(authenticateRepoCall(auth, call('sync', sync), 'generateManifests')).resolves.toEqual({
      service: 'sync',
      actor: 'service:sync',
    });
  });

  it('refuses a forwarded actor, and credential management without a delegation', async () => {
    await expect(
      authenticateRepoCall(auth, call('api', api, { 'x-capstan-actor': 'user:admin' }), 'getCredential'),
    ).rejects.toThrow(PermissionDeniedError);
    await expect(authenticateRepoCall(auth, call('api', api), 'createCredential')).rejects.toThrow(
      /delegation/,
    );
  });

  it('denies unless the method allows the service, and binds the token to the certificate', async () => {
    await expect(authenticateRepoCall(auth, call('sync'), 'getCredential')).rejects.toThrow(
      UnauthenticatedError,
    );
    await expect(authenticateRepoCall(auth, call('sync', sync), 'listCredentials')).rejects.toThrow(
      PermissionDeniedError,
    );
    await expect(authenticateRepoCall(auth, call('sync', sync), 'unknownMethod')).rejects.toThrow(
      PermissionDeniedError,
    );
    await expect(authenticateRepoCall(auth, call('api', sync), 'generateManifests')).rejects.toThrow(
      /certificate of service api/,
    );
    await expect(authenticateRepoCall(auth, call(undefined, sync), 'generateManifests')).rejects.toThrow(
      UnauthenticatedError,
    );
  });
});
