// gitops-engine converts an object to its typed form for one (or a few) versions of its kind and
// fails for others: "unsupported Deployment GVK: apps/v1beta2, Kind=Deployment" (then Unknown).
import { groupVersionOf, type Obj } from '../object.js';
import type { LiveObject } from '../types.js';

export class UnsupportedVersionError extends Error {}

export function requireVersion(obj: LiveObject, what: string, versions: readonly string[]): string {
  const { group, version } = groupVersionOf(obj);
  if (!versions.includes(version))
    throw new UnsupportedVersionError(
      `unsupported ${what} GVK: ${group}/${version}, Kind=${String(obj.kind ?? '')}`,
    );
  return version;
}

/** A condition of `status.conditions` by type (the first, as Go's loops find it). */
export function condition(conditions: Obj[], type: string): Obj | undefined {
  return conditions.find((c) => c.type === type);
}
