// Structural equality of manifests (canonical JSON, @capstan/policy's), so that an upsert or apply that
// changes nothing appends no event.
import { sameJson } from '@capstan/policy';

export const sameManifest: (a: unknown, b: unknown) => boolean = sameJson;

/** Top-level spec fields (and metadata) that differ, for update events: consumers skip what they ignore. */
export function changedFields<M extends { spec: object; metadata: unknown }>(before: M, after: M): string[] {
  const spec = (m: M) => m.spec as Record<string, unknown>;
  const keys = new Set([...Object.keys(spec(before)), ...Object.keys(spec(after))]);
  const out = [...keys].filter((k) => !sameManifest(spec(before)[k], spec(after)[k])).map((k) => `spec.${k}`);
  if (!sameManifest(before.metadata, after.metadata)) out.push('metadata');
  return out.sort();
}
