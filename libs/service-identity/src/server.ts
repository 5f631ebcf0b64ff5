// The server side of an internal call: which service is calling (its token, bound to the service
// its client certificate names), whether it may call this method, and for which user it acts (only
// with a delegation minted for it and for this receiver). Nothing a caller merely declares (a
// forwarded actor, an on-behalf-of name) is believed.
import type { Metadata } from '@grpc/grpc-js';
import {
  contextOfTraceparent,
  inSpan,
  PermissionDeniedError,
  SpanKind,
  UnauthenticatedError,
} from '@capstan/service';
import {
  DELEGATION_METADATA_KEY,
  delegatedActor,
  type Delegation,
  type DelegationVerifier,
} from './delegation.js';
import type { ServiceTokens } from './service-tokens.js';

/** Metadata the project once trusted; a call that still carries it is refused, never half-believed. */
export const REFUSED_METADATA_KEYS = ['x-capstan-actor', 'capstan-on-behalf-of'] as const;

export interface CallIdentity {
  service: string;
  /** Present when the call carries a valid delegation for this service and receiver. */
  delegation?: Delegation;
  /** For audit rows: `service:sync`, or `user:alice via service:api`. */
  actor: string;
}

export interface ServiceAuthenticator {
  tokens: ServiceTokens;
  /** Without one, every delegation is refused. */
  delegations?: DelegationVerifier;
  /**
   * true: the token must be presented on a connection whose verified client certificate names the
   * same service (mutual TLS). Only tests of the binding itself turn it off.
   */
  requireCertificate: boolean;
}

function single(metadata: Metadata, key: string): string | undefined {
  const values = metadata.get(key);
  if (values.length > 1) throw new UnauthenticatedError(`more than one ${key} given`);
  const v = values[0];
  return typeof v === 'string' ? v : undefined;
}

/** The service a bearer token names, bound to the client certificate's service. */
export function authenticateService(
  auth: Pick<ServiceAuthenticator, 'tokens' | 'requireCertificate'>,
  authorization: string | undefined,
  peer: string | undefined,
): string {
  const m = authorization ? /^Bearer\s+(\S+)$/i.exec(authorization.trim()) : null;
  const service = m ? auth.tokens.serviceOf(m[1]!) : undefined;
  if (!service) throw new UnauthenticatedError('a valid service token is required');
  if (auth.requireCertificate && peer !== service)
    throw new UnauthenticatedError(
      peer
        ? `the token of service ${service} was presented with the certificate of service ${peer}`
        : `service ${service} must present its client certificate (mutual TLS)`,
    );
  return service;
}

/**
 * Authenticates an internal call: `allowed` lists the services that may call the method;
 * `peer` is peerService(call). A delegation, when present, must verify.
 */
export async function authenticateCall(
  auth: ServiceAuthenticator,
  metadata: Metadata,
  peer: string | undefined,
  allowed: readonly string[],
  method: string,
): Promise<CallIdentity> {
  for (const key of REFUSED_METADATA_KEYS)
    if (metadata.get(key).length > 0)
      throw new PermissionDeniedError(
        `${key} is not accepted: a service acts for a user only with a delegation`,
      );
  const service = authenticateService(auth, single(metadata, 'authorization'), peer);
  if (!allowed.includes(service))
    throw new PermissionDeniedError(`service ${service} may not call ${method}`);
  const token = single(metadata, DELEGATION_METADATA_KEY);
  if (token === undefined) return { service, actor: `service:${service}` };
  if (!auth.delegations) throw new PermissionDeniedError('this service accepts no delegations');
  const delegation = await auth.delegations.verify(token, service);
  return { service, delegation, actor: delegatedActor(delegation) };
}

/**
 * Runs a method's work in a server span that continues the caller's trace (its `traceparent`
 * metadata), named `<service>/<method>`; only runs it while tracing is off.
 */
export function inServerSpan<T>(
  service: string,
  method: string,
  metadata: Metadata,
  fn: () => Promise<T>,
): Promise<T> {
  return inSpan(
    `${service}/${method}`,
    { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method },
    fn,
    {
      parent: contextOfTraceparent(single(metadata, 'traceparent')),
      kind: SpanKind.SERVER,
    },
  );
}
