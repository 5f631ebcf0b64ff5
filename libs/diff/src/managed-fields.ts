// metadata.managedFields (fieldsV1) of a live object: which manager owns which field. Server-side
// apply removes a field its manager applied before and no longer declares; Argo's
// managedFieldsManagers ignores what other managers (an HPA's kube-controller-manager) own.
// fieldsV1 keys: `f:<field>`, `k:<json of key fields>` (list item by key), `v:<json>` (set item by
// value), `i:<index>`, and `.` (the item itself).
import { isObject, type JsonObject } from './types.js';

/** A fieldsV1 tree (several managers' trees merged). */
export type FieldSet = JsonObject;

/** The union of the fieldsV1 of every managedFields entry whose manager `pick` selects. */
export function fieldSetOf(live: unknown, pick: (manager: string) => boolean): FieldSet | undefined {
  const metadata = isObject(live) ? live.metadata : undefined;
  const entries = isObject(metadata) ? metadata.managedFields : undefined;
  if (!Array.isArray(entries)) return undefined;
  let merged: FieldSet | undefined;
  for (const entry of entries) {
    if (!isObject(entry) || typeof entry.manager !== 'string' || !pick(entry.manager)) continue;
    if (!isObject(entry.fieldsV1)) continue;
    merged = mergeSets(merged ?? {}, entry.fieldsV1);
  }
  return merged;
}

function mergeSets(into: FieldSet, from: FieldSet): FieldSet {
  for (const [key, child] of Object.entries(from)) {
    const existing = into[key];
    into[key] = isObject(existing) && isObject(child) ? mergeSets(existing, child) : cloneSet(child);
  }
  return into;
}

function cloneSet(value: unknown): FieldSet {
  return isObject(value) ? mergeSets({}, value) : {};
}

/** The set of a map field `key` within `set`. */
export function fieldChild(set: FieldSet | undefined, key: string): FieldSet | undefined {
  const child = set?.[`f:${key}`];
  return isObject(child) ? child : undefined;
}

/** A list's set indexed once, so matching n items costs O(n), not O(n²). */
interface ItemIndex {
  byIndex: Map<number, FieldSet>;
  byValue: Map<string, FieldSet>;
  /** key field names (sorted, joined) → signature of their values → set */
  byKeys: Map<string, Map<string, FieldSet>>;
}

const indexes = new WeakMap<FieldSet, ItemIndex>();

function signature(names: readonly string[], item: Record<string, unknown>): string {
  return JSON.stringify(names.map((n) => item[n] ?? null));
}

function indexOf(set: FieldSet): ItemIndex {
  let index = indexes.get(set);
  if (index) return index;
  index = { byIndex: new Map(), byValue: new Map(), byKeys: new Map() };
  for (const [key, child] of Object.entries(set)) {
    if (!isObject(child)) continue;
    if (key.startsWith('i:')) index.byIndex.set(Number(key.slice(2)), child);
    const parsed = key.startsWith('k:') || key.startsWith('v:') ? parse(key.slice(2)) : undefined;
    if (key.startsWith('v:') && parsed !== undefined) index.byValue.set(JSON.stringify(parsed), child);
    if (key.startsWith('k:') && isObject(parsed)) {
      const names = Object.keys(parsed).sort();
      const group = names.join('\u0000');
      if (!index.byKeys.has(group)) index.byKeys.set(group, new Map());
      index.byKeys.get(group)!.set(signature(names, parsed), child);
    }
  }
  indexes.set(set, index);
  return index;
}

/** The set of a list item (matched by key fields, by value, or by index) within a list's set. */
export function itemChild(set: FieldSet | undefined, item: unknown, index: number): FieldSet | undefined {
  if (!set) return undefined;
  const { byIndex, byValue, byKeys } = indexOf(set);
  if (isObject(item)) {
    for (const [group, bySignature] of byKeys) {
      const found = bySignature.get(signature(group.split('\u0000'), item));
      if (found) return found;
    }
  }
  if (byValue.size > 0) {
    const found = byValue.get(JSON.stringify(item));
    if (found) return found;
  }
  return byIndex.get(index);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A set that owns the value itself (a leaf, or `.` only). */
export function isLeaf(set: FieldSet): boolean {
  const keys = Object.keys(set);
  return keys.length === 0 || (keys.length === 1 && keys[0] === '.');
}

/**
 * `value` without the fields `set` owns (the managedFieldsManagers ignore rule): owned leaves go,
 * owned containers are descended into. Returns undefined when the whole value is owned.
 */
export function withoutOwned(value: unknown, set: FieldSet | undefined): unknown {
  if (!set) return value;
  if (isLeaf(set)) return undefined;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    value.forEach((item, index) => {
      const child = itemChild(set, item, index);
      const kept = child ? withoutOwned(item, child) : item;
      if (kept !== undefined) out.push(kept);
    });
    return out;
  }
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    const owned = fieldChild(set, key);
    const kept = owned ? withoutOwned(child, owned) : child;
    if (kept !== undefined) out[key] = kept;
  }
  return out;
}
