// Secret masking as Argo's HideSecretData: every data value becomes a run of `+` whose length is
// the same for equal values across the objects shown together and different for different values,
// so a changed value still shows as a change without showing the value.
import { isSecret, normalizeObject } from './normalize.js';
import { cloneJson, isObject, type KubeObjectLike } from './types.js';

const REPLACEMENT = '++++++++';

/**
 * Masked copies of objects shown together (a target, a live, a predicted live). Non-Secrets are
 * returned as they are; Secrets get their stringData folded into data first.
 */
export function hideSecretData<T extends readonly (KubeObjectLike | undefined)[]>(
  ...objects: T
): { [K in keyof T]: T[K] } {
  if (!objects.some(isSecret)) return objects;
  const copies = objects.map((obj) =>
    isSecret(obj) ? (normalizeObject(maskAnnotation(obj)) as KubeObjectLike) : obj,
  );
  const keys = new Set<string>();
  for (const obj of copies)
    if (isSecret(obj) && isObject(obj?.data)) for (const k of Object.keys(obj.data)) keys.add(k);
  for (const key of [...keys].sort()) {
    let next = REPLACEMENT;
    const byValue = new Map<string, string>();
    for (const obj of copies) {
      const data = isSecret(obj) ? obj?.data : undefined;
      if (!isObject(data) || !Object.hasOwn(data, key)) continue;
      const value = data[key] === null || data[key] === undefined ? '' : String(data[key]);
      let replacement = byValue.get(value);
      if (replacement === undefined) {
        replacement = next;
        next += '++++';
        byValue.set(value, replacement);
      }
      data[key] = replacement;
    }
  }
  return copies as unknown as { [K in keyof T]: T[K] };
}

/** The last-applied annotation of a Secret holds its values: never shown. */
function maskAnnotation(obj: KubeObjectLike | undefined): KubeObjectLike | undefined {
  if (!obj) return obj;
  const copy = cloneJson(obj);
  const annotations = copy.metadata?.annotations;
  if (isObject(annotations)) {
    for (const k of Object.keys(annotations))
      if (k === 'kubectl.kubernetes.io/last-applied-configuration') annotations[k] = REPLACEMENT;
  }
  return copy;
}
