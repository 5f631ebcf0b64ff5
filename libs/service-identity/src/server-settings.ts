// What every internal gRPC server (repo, appset) configures the same way: where it listens, the
// tokens of the services allowed to call, and the api's delegation public key; and the
// ServiceAuthenticator built from them (tokens bound to client certificates, delegations verified
// for this service's audience). The api is the issuer of delegations, so it has its own.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { FailedPreconditionError } from '@capstan/service';
import { DelegationVerifier, delegationPublicKeys } from './delegation.js';
import type { ServiceAuthenticator } from './server.js';
import { ServiceTokens } from './service-tokens.js';

/** The settings of an internal gRPC server listening on `port` by default, called by `callers`. */
export function internalServerSettings(opts: { port: number; purpose: string; callers: string }) {
  return {
    'grpc.host': {
      schema: z.string().min(1),
      default: '127.0.0.1',
      description: `address of the internal gRPC server (${opts.purpose})`,
    },
    'grpc.port': {
      schema: z.coerce.number().int().min(0).max(65535),
      default: opts.port,
      description: 'port of the internal gRPC server (0 picks a free port)',
    },
    'auth.service-tokens': {
      schema: z.string().min(1, 'is required'),
      secret: true,
      description: `tokens of the services allowed to call, ${opts.callers} (each at least 32 characters)`,
    },
    'auth.delegation-public-key': {
      schema: z.string().default(''),
      default: '',
      env: 'CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY',
      description:
        "the api's Ed25519 delegation public key (PEM; several blocks during a rotation); empty: auth.delegation-public-key-file",
    },
    'auth.delegation-public-key-file': {
      schema: z.string().default(''),
      default: '',
      description:
        'file holding the delegation public key (without one, every call acting for a user is refused)',
    },
  };
}

export interface InternalServerConfig {
  'auth.service-tokens': string;
  'auth.delegation-public-key': string;
  'auth.delegation-public-key-file': string;
}

/**
 * Tokens bound to client certificates and, when the api's key is configured, delegations for
 * `audience`. `requireDelegations`: a service whose every method acts for a user refuses to start
 * without the key (no call could ever be accepted).
 */
export function internalServerAuthenticator(
  config: InternalServerConfig,
  audience: string,
  opts: { requireDelegations?: boolean } = {},
): ServiceAuthenticator {
  const pem =
    config['auth.delegation-public-key'] ||
    (config['auth.delegation-public-key-file']
      ? readFileSync(config['auth.delegation-public-key-file'], 'utf8')
      : '');
  if (!pem && opts.requireDelegations)
    throw new FailedPreconditionError(
      `${audience}: set auth.delegation-public-key or auth.delegation-public-key-file (the api's delegation public key)`,
    );
  return {
    tokens: new ServiceTokens(config['auth.service-tokens']),
    ...(pem ? { delegations: new DelegationVerifier(delegationPublicKeys(pem), audience) } : {}),
    requireCertificate: true,
  };
}
