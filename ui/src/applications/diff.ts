// The difference of a resource's desired (git) and live manifests, field by field: each changed
// leaf as `path: desired → live`. Plain functions, bounded (a manifest is the tenant's input): at
// most MAX_CHANGES changes and MAX_DEPTH levels; beyond, the change is reported at that level.
export type FieldChange = {
  /** spec.template.spec.containers[name=web].image, metadata.labels["app.kubernetes.io/name"] */
  path: string;
  /** changed: both sides have it; missing: only git has it; extra: only the cluster has it. */
  op: 'changed' | 'missing' | 'extra';
  desired?: unknown;
  live?: unknown;
};

export type FieldDiff = { changes: FieldChange[]; truncated: boolean };

export const MAX_CHANGES = 2000;
const MAX_DEPTH = 32;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function keyPath(parent: string, key: string): string {
  if (/^[A-Za-z_$][\w$-]*$/.test(key)) return parent ? `${parent}.${key}` : key;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** Objects in a list that all carry a distinct string `name` (containers, ports, env) pair by name. */
function byName(list: unknown[]): Map<string, unknown> | undefined {
  const out = new Map<string, unknown>();
  for (const item of list) {
    if (!isObject(item) || typeof item.name !== 'string' || out.has(item.name)) return undefined;
    out.set(item.name, item);
  }
  return out;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function walk(path: string, desired: unknown, live: unknown, depth: number, out: FieldChange[]): void {
  if (out.length >= MAX_CHANGES) return;
  if (desired === undefined && live === undefined) return;
  if (desired === undefined) return void out.push({ path, op: 'extra', live });
  if (live === undefined) return void out.push({ path, op: 'missing', desired });
  if (depth >= MAX_DEPTH) {
    if (!sameJson(desired, live)) out.push({ path, op: 'changed', desired, live });
    return;
  }
  if (isObject(desired) && isObject(live)) {
    const keys = [...new Set([...Object.keys(desired), ...Object.keys(live)])].sort();
    for (const k of keys) walk(keyPath(path, k), desired[k], live[k], depth + 1, out);
    return;
  }
  if (Array.isArray(desired) && Array.isArray(live)) {
    const d = byName(desired);
    const l = byName(live);
    if (d && l) {
      const names = [...new Set([...d.keys(), ...l.keys()])];
      for (const n of names) walk(`${path}[name=${n}]`, d.get(n), l.get(n), depth + 1, out);
      return;
    }
    const n = Math.max(desired.length, live.length);
    for (let i = 0; i < n; i++) walk(`${path}[${i}]`, desired[i], live[i], depth + 1, out);
    return;
  }
  if (!sameJson(desired, live)) out.push({ path, op: 'changed', desired, live });
}

/** Every field whose value differs between the desired and the live object (either may be absent). */
export function fieldDiff(desired: unknown, live: unknown): FieldDiff {
  const out: FieldChange[] = [];
  walk('', desired ?? undefined, live ?? undefined, 0, out);
  return { changes: out, truncated: out.length >= MAX_CHANGES };
}

/** The diff of two manifests as the api sends them (JSON strings, maybe empty or "null"). */
export function fieldDiffOfStates(targetState: string | undefined, liveState: string | undefined): FieldDiff {
  return fieldDiff(parseState(targetState), parseState(liveState));
}

function parseState(state: string | undefined): unknown {
  if (!state || state === 'null') return undefined;
  try {
    return JSON.parse(state) as unknown;
  } catch {
    return state;
  }
}

/** A value as one line: strings as they are, anything else as compact JSON; absent as "(none)". */
export function formatValue(v: unknown): string {
  if (v === undefined) return '(none)';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** One change as the line `path: desired → live`. */
export function formatChange(c: FieldChange): string {
  return `${c.path || '(whole object)'}: ${formatValue(c.desired)} → ${formatValue(c.live)}`;
}

/** A manifest as the api sends it (a JSON string, maybe empty) as indented JSON for reading. */
export function pretty(state: string | undefined): string {
  if (!state || state === 'null') return '';
  try {
    return JSON.stringify(JSON.parse(state), null, 2);
  } catch {
    return state;
  }
}
