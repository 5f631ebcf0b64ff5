// The hash chain: hash = sha256(table, prev_hash and the canonical JSON of the row's content, one line
// each). Canonical JSON (@capstan/policy's one implementation) sorts object keys, so JSONB columns (which
// PostgreSQL may re-order) hash the same after a round trip.
import { canonicalDigest } from '@capstan/policy';

export const GENESIS_HASH = '0'.repeat(64);

export function chainHash(table: string, prevHash: string, content: Record<string, unknown>): string {
  return canonicalDigest(content, table, prevHash);
}
