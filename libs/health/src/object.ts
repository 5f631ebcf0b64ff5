// Small readers over unstructured objects, the way Go's typed conversion sees them: a missing or
// ill-typed field reads as the zero value.
import type { LiveObject } from './types.js';

export type Obj = Record<string, unknown>;

export function field(o: unknown, ...path: string[]): unknown {
  let cur = o;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Obj)[p];
  }
  return cur;
}

export const num = (o: unknown, ...path: string[]): number => {
  const v = field(o, ...path);
  return typeof v === 'number' ? v : 0;
};

/** An optional integer (a Go *int32): undefined when absent. */
export const optNum = (o: unknown, ...path: string[]): number | undefined => {
  const v = field(o, ...path);
  return typeof v === 'number' ? v : undefined;
};

export const str = (o: unknown, ...path: string[]): string => {
  const v = field(o, ...path);
  return typeof v === 'string' ? v : '';
};

export const list = (o: unknown, ...path: string[]): Obj[] => {
  const v = field(o, ...path);
  return Array.isArray(v) ? (v.filter((x) => x !== null && typeof x === 'object') as Obj[]) : [];
};

export const generation = (obj: LiveObject): number => num(obj, 'metadata', 'generation');
export const nameOf = (obj: LiveObject): string => str(obj, 'metadata', 'name');

export function annotation(obj: LiveObject, key: string): string | undefined {
  const v = field(obj, 'metadata', 'annotations', key);
  return typeof v === 'string' ? v : undefined;
}

/** apiVersion "apps/v1" → { group: 'apps', version: 'v1' }; "v1" → core group. */
export function groupVersionOf(obj: LiveObject): { group: string; version: string } {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Go's %q for the plain names Kubernetes allows. */
export const quote = (s: string): string => JSON.stringify(s);
