import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { PermissionDeniedError, UnauthenticatedError, ValidationError } from '@capstan/service';
import { authenticateCall, ServiceTokens } from './service-identity.js';

const api = 'a'.repeat(40);
const sync = 's'.repeat(40);
const tokens = new ServiceTokens(`api=${api}, sync=${sync}`);
const md = (token?: string, actor?: string) => {
  const m = new Metadata();
  if (token) m.set('authorization', `Bearer ${token}`);
  if (actor) m.set('x-capstan-actor', actor);
  return m;
};

describe('service identity', () => {
  it('authenticates by token and records the forwarded user', () => {
    expect(authenticateCall(tokens, md(api, 'user:alice'), 'getCredential')).toEqual({
      service: 'api',
      actor: 'user:alice via service:api',
    });
    expect(authenticateCall(tokens, md(sync), 'generateManifests')).toEqual({
      service: 'sync',
      actor: 'service:sync',
    });
  });

  it('denies unless the method allows the service', () => {
    expect(() => authenticateCall(tokens, md(), 'getCredential')).toThrow(UnauthenticatedError);
    expect(() => authenticateCall(tokens, md('x'.repeat(40)), 'getCredential')).toThrow(UnauthenticatedError);
    expect(() => authenticateCall(tokens, md(sync), 'createCredential')).toThrow(PermissionDeniedError);
    expect(() => authenticateCall(tokens, md(api), 'noSuchMethod')).toThrow(PermissionDeniedError);
  });

  it('lets only delegating services speak for someone else, with a well-formed name', () => {
    expect(() => authenticateCall(tokens, md(sync, 'user:admin'), 'generateManifests')).toThrow(
      /may not act on behalf/,
    );
    expect(() => authenticateCall(tokens, md(api, 'user:alice;forged'), 'getCredential')).toThrow(
      ValidationError,
    );
  });

  it('refuses weak or malformed token configuration without echoing tokens', () => {
    expect(() => new ServiceTokens('api=short')).toThrow(
      /auth\.service-tokens: token of api must be at least 32 characters/,
    );
    expect(() => new ServiceTokens('=nobody')).toThrow(/expected "service=token" pairs/);
    try {
      new ServiceTokens('api=short-secret-value');
    } catch (err) {
      expect(String(err)).not.toContain('short-secret-value');
    }
  });
});
