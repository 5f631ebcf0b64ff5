// Structural equality of manifests, so that an upsert or apply that changes nothing appends no event.
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .filter(([, x]) => x !== undefined)
            .sort(([a], [b]) => a.localeCompare(b)),
        )
      : v,
  );
}

export function sameManifest(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

/** Top-level spec fields (and metadata) that differ, for update events: consumers skip what they ignore. */
export function changedFields<M extends { spec: object; metadata: unknown }>(before: M, after: M): string[] {
  const spec = (m: M) => m.spec as Record<string, unknown>;
  const keys = new Set([...Object.keys(spec(before)), ...Object.keys(spec(after))]);
  const out = [...keys].filter((k) => !sameManifest(spec(before)[k], spec(after)[k])).map((k) => `spec.${k}`);
  if (!sameManifest(before.metadata, after.metadata)) out.push('metadata');
  return out.sort();
}
