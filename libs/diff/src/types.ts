// The shapes @capstan/diff works on: plain JSON objects as the Kubernetes API returns them.

export type KubeObjectLike = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, unknown> & { name?: string; namespace?: string };
};

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A deep copy of JSON data (what the API server sends and what git renders is always JSON). */
export function cloneJson<T>(value: T): T {
  return value === undefined ? value : (structuredClone(value) as T);
}

/** group of an apiVersion: '' for the core group ('v1'). */
export function groupOf(apiVersion: string | undefined): string {
  if (!apiVersion) return '';
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}
