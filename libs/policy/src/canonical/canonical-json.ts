// Canonical JSON: the one text of a JSON value, with object keys in code-unit order at every depth, so
// that equal values have equal text whatever the order their keys were written or stored in (PostgreSQL
// re-orders jsonb keys). What the project compares structurally (manifests, statuses), digests
// (generated Applications) and hashes (the audit chain) goes through it. The rest is JSON.stringify's:
// a Date becomes its ISO string, an undefined property is left out, an undefined array element is null.
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Whether two JSON values are equal as values (key order does not matter, array order does). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** The hex sha256 of a value's canonical JSON, after the given prefix lines (each followed by a newline). */
export function canonicalDigest(value: unknown, ...prefix: readonly string[]): string {
  const hash = createHash('sha256');
  for (const line of prefix) hash.update(line).update('\n');
  return hash.update(canonicalJson(value)).digest('hex');
}
