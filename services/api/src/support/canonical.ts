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
