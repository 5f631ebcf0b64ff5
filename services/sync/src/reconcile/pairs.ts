// The objects one comparison is made of (no I/O; reads the informers' caches): each declared object
// with its live object, and each live object this Application owns by tracking id — the id names
// this Application and this very object, as prune and cascade deletion require — that git no
// longer declares.
import type { KubeObjectLike } from '@capstan/diff';
import { ownershipOf } from '../apply/tracking.js';
import { groupOf, HOOK_ANNOTATION } from '../apply/plan.js';
import type { DesiredState } from './desired.js';
import { objectKey, splitObjectKey, type LiveIndex } from './live-index.js';
import type { ResourcePair } from './verdict.js';
import { watchKeyText } from './watch-key.js';

export interface LiveCaches {
  get(informer: string, namespace: string, name: string): unknown;
}

const HOOK_ANNOTATIONS = [HOOK_ANNOTATION, 'helm.sh/hook'];

function isHook(live: KubeObjectLike): boolean {
  const annotations = live.metadata?.annotations as Record<string, unknown> | undefined;
  return HOOK_ANNOTATIONS.some((a) => typeof annotations?.[a] === 'string');
}

const versionOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[1]! : apiVersion);

export function livePairs(
  desired: DesiredState,
  caches: LiveCaches,
  index: Pick<LiveIndex, 'trackedBy'>,
  informers: ReadonlySet<string>,
): ResourcePair[] {
  const pairs: ResourcePair[] = [];
  const declared = new Set<string>();
  for (const r of desired.resources) {
    const w = r.watch;
    const informer = watchKeyText(w);
    const namespace = r.ref.namespace ?? '';
    declared.add(objectKey(informer, namespace, r.ref.name));
    pairs.push({
      group: w.group,
      version: w.version,
      kind: r.ref.kind,
      namespace,
      name: r.ref.name,
      desired: r.object as KubeObjectLike,
      live: caches.get(informer, namespace, r.ref.name) as KubeObjectLike | undefined,
    });
  }
  for (const key of index.trackedBy(desired.tracking.instance)) {
    if (declared.has(key)) continue;
    const { informer, namespace, name } = splitObjectKey(key);
    if (!informers.has(informer)) continue;
    const live = caches.get(informer, namespace, name) as
      (KubeObjectLike & { apiVersion: string; kind: string }) | undefined;
    // Hooks carry the tracking id too but are not resources (Argo CD does not compare them).
    if (!live || isHook(live)) continue;
    const ref = { apiVersion: live.apiVersion, kind: live.kind, name, ...(namespace ? { namespace } : {}) };
    if (ownershipOf(live, desired.tracking, ref).kind !== 'owned') continue;
    pairs.push({
      group: groupOf(live.apiVersion),
      version: versionOf(live.apiVersion),
      kind: live.kind,
      namespace,
      name,
      desired: undefined,
      live,
    });
  }
  return pairs;
}
