// Internal service tokens: opaque random strings configured for each service ("sync=<token>").
// Compared by SHA-256 digest in constant time, so the lookup reveals nothing through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '@capstan/service';

export class ServiceTokens {
  private readonly digests: { service: string; digest: Buffer }[];

  constructor(spec: string) {
    this.digests = [];
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
      if (token.length < 32) {
        throw new ValidationError([
          { field: 'auth.service-tokens', description: `token of ${service} must be at least 32 characters` },
        ]);
      }
      this.digests.push({ service, digest: createHash('sha256').update(token).digest() });
    }
  }

  /** The service a token belongs to, or undefined. */
  serviceOf(token: string): string | undefined {
    const digest = createHash('sha256').update(token).digest();
    let found: string | undefined;
    for (const d of this.digests) if (timingSafeEqual(d.digest, digest)) found = d.service;
    return found;
  }
}
