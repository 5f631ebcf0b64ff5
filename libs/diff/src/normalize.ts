// Normalisation before comparing (Argo's diff.Normalize): drop what the API server manages, move a
// Secret's stringData into data, and treat the tracking mark Capstan adds on apply as declared.
import { cloneJson, groupOf, isObject, type JsonObject, type KubeObjectLike } from './types.js';

const SERVER_METADATA = [
  'managedFields',
  'resourceVersion',
  'uid',
  'generation',
  'creationTimestamp',
  'selfLink',
];
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** Argo's tracking mark: Capstan adds it when applying, so git never declares it. */
export const TRACKING_ANNOTATION = 'argocd.argoproj.io/tracking-id';

export function isSecret(obj: KubeObjectLike | undefined): boolean {
  return obj !== undefined && obj.kind === 'Secret' && groupOf(obj.apiVersion) === '';
}

/** A copy without server-managed metadata and the last-applied annotation; Secrets' stringData in data. */
export function normalizeObject(obj: KubeObjectLike | undefined): KubeObjectLike | undefined {
  if (!obj) return undefined;
  const out = cloneJson(obj);
  const metadata = out.metadata;
  if (isObject(metadata)) {
    for (const field of SERVER_METADATA) delete metadata[field];
    dropKey(metadata, 'annotations', LAST_APPLIED_ANNOTATION);
  }
  if (isSecret(out)) normalizeSecret(out);
  return out;
}

function dropKey(holder: JsonObject, mapKey: string, key: string): void {
  const map = holder[mapKey];
  if (!isObject(map) || !Object.hasOwn(map, key)) return;
  delete map[key];
  if (Object.keys(map).length === 0) delete holder[mapKey];
}

/** stringData → data (base64), as the API server stores it; null values become '' (Argo #943). */
function normalizeSecret(secret: JsonObject): void {
  const stringData = secret.stringData;
  const data: JsonObject = isObject(secret.data) ? secret.data : {};
  if (isObject(stringData)) {
    for (const [k, v] of Object.entries(stringData)) {
      data[k] = typeof v === 'string' ? Buffer.from(v, 'utf8').toString('base64') : v;
    }
    delete secret.stringData;
  }
  for (const [k, v] of Object.entries(data)) if (v === null) data[k] = '';
  if (isObject(secret.data) || Object.keys(data).length > 0) secret.data = data;
}

/**
 * Removes from live what git does not govern: the status of a kind whose status git does not
 * declare, and the tracking mark when git does not carry it (Capstan adds it on apply).
 */
export function dropUndeclared(target: KubeObjectLike, live: KubeObjectLike): void {
  if (!Object.hasOwn(target, 'status')) {
    delete live.status;
    delete target.status;
  }
  const annotations = target.metadata?.annotations;
  if (!isObject(annotations) || !Object.hasOwn(annotations, TRACKING_ANNOTATION)) {
    if (isObject(live.metadata)) dropKey(live.metadata, 'annotations', TRACKING_ANNOTATION);
  }
}
