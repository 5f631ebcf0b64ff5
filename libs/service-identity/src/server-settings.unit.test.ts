// The settings and authenticator every internal gRPC server shares.
import { describe, expect, it } from 'vitest';
import { FailedPreconditionError } from '@capstan/service';
import { generateDelegationKeyPair } from './delegation.js';
import { internalServerAuthenticator, internalServerSettings } from './server-settings.js';

const tokens = `api=${'a'.repeat(40)}`;

describe('internal gRPC servers', () => {
  it('default to their own port and name their callers', () => {
    const s = internalServerSettings({ port: 8092, purpose: 'AppSetService', callers: '"api=<token>"' });
    expect(s['grpc.port'].default).toBe(8092);
    expect(s['auth.service-tokens'].secret).toBe(true);
  });

  it('verify delegations for their own audience when the api key is configured', () => {
    const { publicKeyPem } = generateDelegationKeyPair();
    const config = {
      'auth.service-tokens': tokens,
      'auth.delegation-public-key': publicKeyPem,
      'auth.delegation-public-key-file': '',
    };
    const auth = internalServerAuthenticator(config, 'repo');
    expect(auth.delegations).toBeDefined();
    expect(auth.requireCertificate).toBe(true);
  });

  it('refuse to start without the key when every method acts for a user', () => {
    const config = {
      'auth.service-tokens': tokens,
      'auth.delegation-public-key': '',
      'auth.delegation-public-key-file': '',
    };
    expect(internalServerAuthenticator(config, 'repo').delegations).toBeUndefined();
    expect(() => internalServerAuthenticator(config, 'appset', { requireDelegations: true })).toThrow(
      FailedPreconditionError,
    );
  });
});
