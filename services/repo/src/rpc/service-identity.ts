// Who may call the repo service: internal services with a configured token ("api=<token>,
// sync=<token>,appset=<token>", each at least 32 characters), compared by SHA-256 digest in constant
// time. Each method names the services allowed to call it; everything else is refused (deny unless
// allowed). The api forwards the user it authenticated in `x-capstan-actor`, recorded in audit rows
// as "<actor> via service:api".
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';
import { PermissionDeniedError, UnauthenticatedError, ValidationError } from '@capstan/service';

export const ACTOR_METADATA_KEY = 'x-capstan-actor';

export interface CallerIdentity {
  service: string;
  /** For audit rows: `user:alice via service:api`, or `service:sync`. */
  actor: string;
}

export class ServiceTokens {
  private readonly digests: { service: string; digest: Buffer }[] = [];

  constructor(spec: string) {
    for (const part of spec
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const eq = part.indexOf('=');
      const service = part.slice(0, eq).trim();
      const token = part.slice(eq + 1).trim();
      if (eq <= 0 || !/^[a-z][a-z0-9-]*$/.test(service)) {
        throw new ValidationError([
          { field: 'auth.service-tokens', description: 'expected "service=token" pairs separated by commas' },
        ]);
      }
      if (token.length < 32)
        throw new ValidationError([
          { field: 'auth.service-tokens', description: `token of ${service} must be at least 32 characters` },
        ]);
      this.digests.push({ service, digest: createHash('sha256').update(token).digest() });
    }
  }

  serviceOf(token: string): string | undefined {
    const digest = createHash('sha256').update(token).digest();
    let found: string | undefined;
    for (const d of this.digests) if (timingSafeEqual(d.digest, digest)) found = d.service;
    return found;
  }
}

/** Which services may call each method. */
export const methodPolicy: Record<string, readonly string[]> = {
  createCredential: ['api'],
  updateCredential: ['api'],
  getCredential: ['api'],
  listCredentials: ['api'],
  deleteCredential: ['api'],
  applyCredentialSecret: ['api'],
  lookupCredential: ['api', 'sync', 'appset'],
  resolveRevision: ['api', 'sync', 'appset'],
  generateManifests: ['api', 'sync', 'appset'],
  listDirectories: ['api', 'appset'],
  listFiles: ['api', 'appset'],
};

/** Services that act for users (the api fronts them; appset generates on a user's behalf). */
const DELEGATING_SERVICES: readonly string[] = ['api', 'appset'];

const ACTOR = /^[A-Za-z0-9:@._\- ]{1,256}$/;

export function authenticateCall(tokens: ServiceTokens, metadata: Metadata, method: string): CallerIdentity {
  const header = metadata.get('authorization')[0];
  const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7).trim() : '';
  const service = token ? tokens.serviceOf(token) : undefined;
  if (!service) throw new UnauthenticatedError('a valid service token is required');
  const allowed = methodPolicy[method] ?? [];
  if (!allowed.includes(service))
    throw new PermissionDeniedError(`service ${service} may not call ${method}`);
  const forwarded = metadata.get(ACTOR_METADATA_KEY)[0];
  if (forwarded !== undefined && !DELEGATING_SERVICES.includes(service)) {
    throw new PermissionDeniedError(`service ${service} may not act on behalf of another principal`);
  }
  if (forwarded !== undefined && (typeof forwarded !== 'string' || !ACTOR.test(forwarded))) {
    throw new ValidationError([
      { field: `metadata.${ACTOR_METADATA_KEY}`, description: 'must be a principal name' },
    ]);
  }
  return { service, actor: forwarded ? `${forwarded} via service:${service}` : `service:${service}` };
}
