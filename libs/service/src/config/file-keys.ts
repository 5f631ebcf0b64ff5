// The keys of a configuration file: nested (`application: {sync: {impersonation: {enabled: true}}}`),
// flat (`application.sync.impersonation.enabled: "true"`, as Argo CD writes its keys) or any mix of
// the two. A key the service does not know is named in a warning with the nearest known key, never
// ignored in silence.
import { closest, distance } from 'fastest-levenshtein';

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The value of a dotted key, whichever way the file splits it into levels. */
export function lookupKey(doc: unknown, key: string): unknown {
  if (!isMap(doc)) return undefined;
  if (Object.hasOwn(doc, key)) return doc[key];
  for (let i = key.indexOf('.'); i > 0; i = key.indexOf('.', i + 1)) {
    const head = key.slice(0, i);
    if (!Object.hasOwn(doc, head)) continue;
    const found = lookupKey(doc[head], key.slice(i + 1));
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Dotted paths of the file's leaves that name no setting (a known key's value may be a map). */
function unknownLeaves(doc: unknown, known: ReadonlySet<string>, prefix: string, out: string[]): void {
  if (!isMap(doc)) {
    if (prefix !== '') out.push(prefix);
    return;
  }
  for (const [k, v] of Object.entries(doc)) {
    const path = prefix === '' ? k : `${prefix}.${k}`;
    if (known.has(path)) continue;
    const isPrefix = [...known].some((key) => key.startsWith(`${path}.`));
    if (isMap(v) && isPrefix) unknownLeaves(v, known, path, out);
    else out.push(path);
  }
}

export function nearestKey(key: string, known: readonly string[]): string | undefined {
  if (known.length === 0) return undefined;
  const near = closest(key, [...known]);
  return distance(key, near) <= Math.max(2, Math.floor(key.length / 5)) ? near : undefined;
}

export function fileKeyWarnings(doc: unknown, known: readonly string[], file: string): string[] {
  const out: string[] = [];
  unknownLeaves(doc, new Set(known), '', out);
  return out.map((key) => {
    const near = nearestKey(key, known);
    return `unknown setting ${JSON.stringify(key)} in ${file}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ''}: ignored`;
  });
}
