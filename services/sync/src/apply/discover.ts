// Discovery, as the sync identity: the scope of every kind the manifests use (a kind the cluster
// does not serve is a problem, not a crash), namespaces filled in as Argo CD does; and the
// destination namespace that syncOptions CreateNamespace=true creates first.
import type { Application } from '@capstan/policy';
import type { KubeObject } from '../manifests/manifest-source.js';
import type { TargetCluster } from '../kube/target-cluster.js';
import type { ResourceRef } from '../delivery/control-plane-objects.js';
import { groupOf } from './plan.js';
import type { AppSyncOptions } from './sync-options.js';

export interface Discovered {
  objects: KubeObject[];
  resources: ResourceRef[];
  problems: string[];
}

export async function discover(
  cluster: Pick<TargetCluster, 'scope'>,
  rendered: readonly KubeObject[],
  where: { destNamespace: string; clusterName: string },
): Promise<Discovered> {
  const out: Discovered = { objects: [], resources: [], problems: [] };
  for (const o of rendered) {
    const scope = await cluster.scope(o.apiVersion, o.kind);
    if (!scope) {
      out.problems.push(
        `${o.kind} ${o.metadata.name}: kind ${o.kind} of ${o.apiVersion} is not served by cluster ${where.clusterName}`,
      );
      continue;
    }
    const namespace = scope.namespaced
      ? (o.metadata.namespace ?? (where.destNamespace || undefined))
      : undefined;
    if (scope.namespaced && !namespace) {
      out.problems.push(
        `${o.kind} ${o.metadata.name}: namespaced, but neither it nor the Application's destination names a namespace`,
      );
      continue;
    }
    const metadata = { ...o.metadata };
    if (namespace) metadata.namespace = namespace;
    else delete metadata.namespace;
    out.objects.push({ ...o, metadata });
    out.resources.push({
      group: groupOf(o.apiVersion),
      kind: o.kind,
      namespaced: scope.namespaced,
      name: o.metadata.name,
      ...(namespace ? { namespace } : {}),
    });
  }
  return out;
}

/**
 * syncOptions CreateNamespace=true: the destination namespace, applied first as the sync identity
 * when the manifests do not declare it themselves (never pruned, as in Argo CD), with the labels and
 * annotations of spec.syncPolicy.managedNamespaceMetadata (server-side apply: an existing
 * namespace gets them too; a Namespace in the manifests wins, as in Argo CD).
 */
export function managedNamespace(
  options: Pick<AppSyncOptions, 'createNamespace'>,
  syncPolicy: Application['spec']['syncPolicy'],
  destNamespace: string,
  objects: readonly KubeObject[],
): KubeObject | undefined {
  if (!options.createNamespace || destNamespace === '') return undefined;
  const declared = objects.some(
    (o) => o.kind === 'Namespace' && o.apiVersion === 'v1' && o.metadata.name === destNamespace,
  );
  if (declared) return undefined;
  const managed = (
    syncPolicy as {
      managedNamespaceMetadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    }
  ).managedNamespaceMetadata;
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: destNamespace,
      ...(managed?.labels ? { labels: managed.labels } : {}),
      ...(managed?.annotations ? { annotations: managed.annotations } : {}),
    },
  };
}
