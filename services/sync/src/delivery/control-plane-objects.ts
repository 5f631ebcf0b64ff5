// Objects of group argoproj.io and kind AppProject, Application or ApplicationSet in an
// Application's manifests are Capstan's own (Argo CD users know them as app-of-projects and
// app-of-apps), not the target cluster's: the sync hands them to the api instead of applying them to
// the cluster. Other argoproj.io kinds (Argo Rollouts' Rollout, Argo Workflows' Workflow, ...) are
// ordinary cluster objects.
import { excludedResourceMessage, isExcludedResource, type ResourceFilter } from '@capstan/policy';
import type { KubeObject } from '../manifests/manifest-source.js';
import { groupOf, type ObjectRef } from '../apply/plan.js';

export const ARGO_GROUP = 'argoproj.io';
const CONTROL_PLANE_KINDS = new Set(['AppProject', 'Application', 'ApplicationSet']);

export function isControlPlaneObject(o: { apiVersion: string; kind: string }): boolean {
  return groupOf(o.apiVersion) === ARGO_GROUP && CONTROL_PLANE_KINDS.has(o.kind);
}

export const isControlPlaneRef = (r: ObjectRef): boolean => isControlPlaneObject(r);

/**
 * The cluster's objects and Capstan's own, apart; with a resource filter (argocd-cm's
 * resource.exclusions/inclusions, for the destination `server`), the excluded ones apart too,
 * each with Argo CD's ExcludedResourceWarning message.
 */
export function partitionObjects(
  objects: readonly KubeObject[],
  filtered?: { filter: ResourceFilter | undefined; server: string },
): {
  cluster: KubeObject[];
  controlPlane: KubeObject[];
  excluded: { object: KubeObject; message: string }[];
} {
  const cluster: KubeObject[] = [];
  const controlPlane: KubeObject[] = [];
  const excluded: { object: KubeObject; message: string }[] = [];
  const filter = filtered?.filter ?? { exclusions: [], inclusions: [] };
  for (const o of objects) {
    const group = groupOf(o.apiVersion);
    if (filtered && isExcludedResource(filter, group, o.kind, filtered.server))
      excluded.push({ object: o, message: excludedResourceMessage(group, o.kind, o.metadata.name) });
    else (isControlPlaneObject(o) ? controlPlane : cluster).push(o);
  }
  return { cluster, controlPlane, excluded };
}

/** A ref (applied by an earlier sync) of a kind the resource filter now excludes: neither pruned nor watched, as in Argo CD. */
export function isExcludedRef(
  ref: { apiVersion: string; kind: string },
  filtered: { filter: ResourceFilter | undefined; server: string },
): boolean {
  return (
    filtered.filter !== undefined &&
    isExcludedResource(filtered.filter, groupOf(ref.apiVersion), ref.kind, filtered.server)
  );
}

export interface ResourceRef {
  group: string;
  kind: string;
  namespaced: boolean;
  namespace?: string;
  name: string;
}

/**
 * Control-plane objects as the project checks see them (namespaced kinds of argoproj.io, in their
 * own namespace or the destination's, as any namespaced object).
 */
export function controlPlaneResources(
  objects: readonly KubeObject[],
  destNamespace: string,
): { objects: KubeObject[]; resources: ResourceRef[]; problems: string[] } {
  const out: KubeObject[] = [];
  const resources: ResourceRef[] = [];
  const problems: string[] = [];
  for (const o of objects) {
    const namespace = o.metadata.namespace ?? (destNamespace || undefined);
    if (!namespace) {
      problems.push(
        `${o.kind} ${o.metadata.name}: namespaced, but neither it nor the Application's destination names a namespace`,
      );
      continue;
    }
    out.push({ ...o, metadata: { ...o.metadata, namespace } });
    resources.push({ group: ARGO_GROUP, kind: o.kind, namespaced: true, namespace, name: o.metadata.name });
  }
  return { objects: out, resources, problems };
}

export const refOf = (o: KubeObject): ObjectRef => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  namespace: o.metadata.namespace,
  name: o.metadata.name,
});
