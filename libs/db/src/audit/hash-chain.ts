// The hash chain: hash = sha256(prev_hash + canonical JSON of the row's content). Canonical JSON
// sorts object keys, so JSONB columns (which PostgreSQL may re-order) hash the same after a round trip.
import { createHash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value));
}

export function chainHash(table: string, prevHash: string, content: Record<string, unknown>): string {
  return createHash('sha256')
    .update(table)
    .update('\n')
    .update(prevHash)
    .update('\n')
    .update(canonicalJson(content))
    .digest('hex');
}
