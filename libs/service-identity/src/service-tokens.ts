// Internal service tokens: opaque random strings, one per calling service ("sync=<token>,
// appset=<token>", each at least 32 characters). A token names a service; it never names a user.
// Compared by SHA-256 digest in constant time against every configured token, so the lookup reveals
// nothing through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '@capstan/service';

export const SERVICE_NAME = /^[a-z][a-z0-9-]{0,62}$/;
export const MIN_TOKEN_LENGTH = 32;

export class ServiceTokens {
  private readonly digests: { service: string; digest: Buffer }[] = [];

  /** `field` names the setting in errors (the token itself never appears in one). */
  constructor(spec: string, field = 'auth.service-tokens') {
    for (const part of spec
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const eq = part.indexOf('=');
      const service = part.slice(0, eq).trim();
      const token = part.slice(eq + 1).trim();
      if (eq <= 0 || !SERVICE_NAME.test(service))
        throw new ValidationError([
          { field, description: 'expected "service=token" pairs separated by commas' },
        ]);
      if (token.length < MIN_TOKEN_LENGTH)
        throw new ValidationError([
          { field, description: `token of ${service} must be at least ${MIN_TOKEN_LENGTH} characters` },
        ]);
      this.digests.push({ service, digest: digest(token) });
    }
  }

  get services(): readonly string[] {
    return this.digests.map((d) => d.service);
  }

  /** The service a token belongs to, or undefined. Every configured digest is compared. */
  serviceOf(token: string): string | undefined {
    const d = digest(token);
    let found: string | undefined;
    for (const entry of this.digests) if (timingSafeEqual(entry.digest, d)) found = entry.service;
    return found;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
