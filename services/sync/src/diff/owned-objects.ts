// Which objects own which (pure, no I/O): the kinds a controller makes for each kind (a Deployment's
// ReplicaSets, their Pods, ...) and the tree's nodes built from the objects listed, following
// ownerReferences by uid as Argo CD's cluster cache does. Argo CD walks every kind of the cluster;
// Capstan lists only these child kinds, in the namespaces of their parents, as the Application's
// ServiceAccount, so a tree costs a few bounded list calls.
import type { HealthStatus } from '@capstan/health';
import type { apiv1 } from '@capstan/proto';
import { groupOf } from '../apply/plan.js';

export interface ChildKind {
  apiVersion: string;
  kind: string;
}

const POD: ChildKind = { apiVersion: 'v1', kind: 'Pod' };

/** What the built-in controllers make for each kind (key: group/kind). */
export const CHILD_KINDS: Readonly<Record<string, readonly ChildKind[]>> = {
  'apps/Deployment': [{ apiVersion: 'apps/v1', kind: 'ReplicaSet' }],
  'apps/ReplicaSet': [POD],
  'apps/StatefulSet': [POD],
  'apps/DaemonSet': [POD],
  'batch/Job': [POD],
  'batch/CronJob': [{ apiVersion: 'batch/v1', kind: 'Job' }],
  '/ReplicationController': [POD],
  '/Service': [{ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' }],
};

export const childKindsOf = (apiVersion: string, kind: string): readonly ChildKind[] =>
  CHILD_KINDS[`${groupOf(apiVersion)}/${kind}`] ?? [];

export interface LiveObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string | Date;
    ownerReferences?: Array<{ uid?: string }>;
  };
  spec?: unknown;
  status?: unknown;
}

/** Argo CD's ResourceRef of a live object. */
export function refOfLive(o: LiveObject): apiv1.ResourceRef {
  const apiVersion = o.apiVersion ?? '';
  return {
    group: groupOf(apiVersion),
    version: apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion,
    kind: o.kind ?? '',
    namespace: o.metadata?.namespace ?? '',
    name: o.metadata?.name ?? '',
    uid: o.metadata?.uid ?? '',
  };
}

/** The containers' images of a Pod or of a workload's pod template (Argo CD's node images). */
export function imagesOf(o: LiveObject): string[] {
  const spec = o.spec as
    | {
        containers?: Array<{ image?: string }>;
        template?: { spec?: { containers?: Array<{ image?: string }> } };
      }
    | undefined;
  const containers = spec?.containers ?? spec?.template?.spec?.containers ?? [];
  return [...new Set(containers.map((c) => c.image ?? '').filter(Boolean))];
}

export function nodeOf(
  o: LiveObject,
  parents: readonly apiv1.ResourceRef[],
  health: HealthStatus | undefined,
): apiv1.ResourceNode {
  const created = o.metadata?.creationTimestamp;
  return {
    ...refOfLive(o),
    parentRefs: [...parents],
    info: [],
    resourceVersion: o.metadata?.resourceVersion ?? '',
    images: imagesOf(o),
    ...(health ? { health: { status: health.status, message: health.message ?? '' } } : {}),
    createdAt: created instanceof Date ? created.toISOString() : (created ?? ''),
  };
}

/** The objects among `candidates` owned by one of `parents` (by uid), each with its owners' refs. */
export function ownedBy(
  parents: readonly LiveObject[],
  candidates: readonly LiveObject[],
): Array<{ object: LiveObject; parents: apiv1.ResourceRef[] }> {
  const byUid = new Map(
    parents.filter((p) => p.metadata?.uid).map((p) => [p.metadata!.uid!, refOfLive(p)] as const),
  );
  const out: Array<{ object: LiveObject; parents: apiv1.ResourceRef[] }> = [];
  for (const c of candidates) {
    const owners = (c.metadata?.ownerReferences ?? [])
      .map((r) => (r.uid ? byUid.get(r.uid) : undefined))
      .filter((r): r is apiv1.ResourceRef => r !== undefined);
    if (owners.length > 0) out.push({ object: c, parents: owners });
  }
  return out;
}
