// What the live object would be once git's object is applied with server-side apply, and where it
// differs from live now. A field git does not declare keeps its live value (API-server defaulting is
// not drift) unless capstan's field manager owns it alone: then applying removes it, which is drift.
import { canonicallyEqual } from './canonical.js';
import { fieldChild, isLeaf, itemChild, type FieldSet } from './managed-fields.js';
import { cloneJson, isObject, type JsonObject } from './types.js';

interface Context {
  /** JSON pointers where the predicted live object differs from live. */
  readonly differences: string[];
  /** How deep merge is now; past MAX_DEPTH subtrees compare whole (bounded recursion). */
  depth: number;
}

/** Deeper than any Kubernetes object needs (CRD schemas reach ~40); guards the stack. */
const MAX_DEPTH = 128;

/** Ownership of one node: capstan's set and the other managers' set. */
interface Owners {
  own: FieldSet | undefined;
  others: FieldSet | undefined;
}

const NONE: Owners = { own: undefined, others: undefined };

function escape(segment: string | number): string {
  return String(segment).replaceAll('~', '~0').replaceAll('/', '~1');
}

/** null, {} and [] (deeply) are what Argo treats as absent. */
export function isEmptyish(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isObject(value)) return Object.values(value).every(isEmptyish);
  return false;
}

export interface Prediction {
  predicted: unknown;
  differences: string[];
}

export function predictLive(
  target: unknown,
  live: unknown,
  own: FieldSet | undefined,
  others: FieldSet | undefined,
): Prediction {
  const ctx: Context = { differences: [], depth: 0 };
  const predicted = merge(target, live, { own, others }, '', undefined, undefined, ctx);
  return { predicted, differences: ctx.differences };
}

function merge(
  target: unknown,
  live: unknown,
  owners: Owners,
  path: string,
  key: string | undefined,
  parentKey: string | undefined,
  ctx: Context,
): unknown {
  if (ctx.depth >= MAX_DEPTH) {
    if (JSON.stringify(target) !== JSON.stringify(live)) ctx.differences.push(path);
    return cloneJson(target);
  }
  ctx.depth += 1;
  try {
    return mergeNode(target, live, owners, path, key, parentKey, ctx);
  } finally {
    ctx.depth -= 1;
  }
}

function mergeNode(
  target: unknown,
  live: unknown,
  owners: Owners,
  path: string,
  key: string | undefined,
  parentKey: string | undefined,
  ctx: Context,
): unknown {
  if (isEmptyish(target) && isEmptyish(live)) return live;
  if (isObject(target)) {
    if (isObject(live)) return mergeObjects(target, live, owners, path, key, ctx);
  } else if (Array.isArray(target)) {
    if (Array.isArray(live)) return mergeLists(target, live, owners, path, key, ctx);
  } else if (target === null) {
    return live;
  } else if (live !== undefined && canonicallyEqual(target, live, key ?? '', parentKey)) {
    return live;
  }
  ctx.differences.push(path);
  return cloneJson(target);
}

function mergeObjects(
  target: JsonObject,
  live: JsonObject,
  owners: Owners,
  path: string,
  key: string | undefined,
  ctx: Context,
): JsonObject {
  const out: JsonObject = {};
  for (const [k, liveValue] of Object.entries(live)) {
    const childOwners = { own: fieldChild(owners.own, k), others: fieldChild(owners.others, k) };
    if (Object.hasOwn(target, k)) {
      const merged = merge(target[k], liveValue, childOwners, `${path}/${escape(k)}`, k, key, ctx);
      if (merged !== undefined) out[k] = merged;
      continue;
    }
    const kept = pruneOwned(liveValue, childOwners, `${path}/${escape(k)}`, ctx);
    if (kept !== undefined) out[k] = kept;
  }
  for (const [k, targetValue] of Object.entries(target)) {
    if (Object.hasOwn(live, k)) continue;
    const merged = merge(targetValue, undefined, NONE, `${path}/${escape(k)}`, k, key, ctx);
    if (merged !== undefined) out[k] = merged;
  }
  return out;
}

/** Items are matched by `name` when every item on both sides has a distinct one (containers, env, ports, volumes). */
function namesOf(items: unknown[]): string[] | undefined {
  const names: string[] = [];
  for (const item of items) {
    if (!isObject(item) || typeof item.name !== 'string') return undefined;
    names.push(item.name);
  }
  return new Set(names).size === names.length ? names : undefined;
}

function mergeLists(
  target: unknown[],
  live: unknown[],
  owners: Owners,
  path: string,
  key: string | undefined,
  ctx: Context,
): unknown[] {
  const targetNames = namesOf(target);
  const liveNames = namesOf(live);
  if (!targetNames || !liveNames) {
    // Matched by index: under server-side apply such a list is atomic, so extra live items go.
    const out = target.map((item, i) =>
      merge(item, live[i], itemOwners(owners, live[i], i), `${path}/${i}`, key, key, ctx),
    );
    if (live.length > target.length) ctx.differences.push(`${path}/${target.length}`);
    return out;
  }
  const liveByName = new Map(liveNames.map((name, i) => [name, i]));
  const out = target.map((item, i) => {
    const at = liveByName.get(targetNames[i]!);
    const liveItem = at === undefined ? undefined : live[at];
    return merge(item, liveItem, itemOwners(owners, liveItem, at ?? -1), `${path}/${i}`, key, key, ctx);
  });
  const declared = new Set(targetNames);
  live.forEach((item, i) => {
    if (declared.has(liveNames[i]!)) return;
    const kept = pruneOwned(item, itemOwners(owners, item, i), `${path}/${out.length}`, ctx);
    if (kept !== undefined) out.push(kept);
  });
  return out;
}

function itemOwners(owners: Owners, item: unknown, index: number): Owners {
  return { own: itemChild(owners.own, item, index), others: itemChild(owners.others, item, index) };
}

/** An undeclared live value minus what capstan alone owns (server-side apply would remove it). */
function pruneOwned(value: unknown, owners: Owners, path: string, ctx: Context): unknown {
  const { own, others } = owners;
  if (!own) return value;
  if (isLeaf(own) || own['.'] !== undefined) {
    // Capstan owns the value itself: it goes unless another manager holds part of it.
    if (others) return value;
    ctx.differences.push(path);
    return undefined;
  }
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, child] of Object.entries(value)) {
      const kept = pruneOwned(
        child,
        { own: fieldChild(own, k), others: fieldChild(others, k) },
        `${path}/${escape(k)}`,
        ctx,
      );
      if (kept !== undefined) out[k] = kept;
    }
    return out;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    value.forEach((item, i) => {
      const kept = pruneOwned(item, itemOwners(owners, item, i), `${path}/${i}`, ctx);
      if (kept !== undefined) out.push(kept);
    });
    return out;
  }
  return value;
}
