// The part of the deployment and replicaset controllers that makes objects (opt-in: startWorkload-
// Controllers(kc, { ownedObjects: true })): for each Deployment, the ReplicaSet of its pod template
// (named <deployment>-<pod-template-hash>, as the deployment controller names it, owned by the
// Deployment), and for that ReplicaSet its Pods (owned by it), so a resource tree has the objects a
// real cluster would show under a Deployment. One ReplicaSet per template, never scaled down or
// removed when the template changes; Kubernetes' garbage collector is not run either. The
// namespace gets its `default` ServiceAccount as the serviceaccount controller would give it.
import { AppsV1Api, CoreV1Api, type KubeConfig, type V1OwnerReference } from '@kubernetes/client-node';
import { templateHash, type Workload } from './workload-status.js';

type Obj = Record<string, unknown>;

const ownerRef = (apiVersion: string, kind: string, name: string, uid: string): V1OwnerReference => ({
  apiVersion,
  kind,
  name,
  uid,
  controller: true,
  blockOwnerDeletion: true,
});

const conflict = (err: unknown) => (err as { code?: number }).code === 409;

/** Creates (once) the Deployment's ReplicaSet and its Pods; returns how many objects it made. */
export async function ensureOwnedObjects(kc: KubeConfig, d: Workload): Promise<number> {
  const name = d.metadata?.name;
  const namespace = d.metadata?.namespace;
  const uid = (d.metadata as { uid?: string } | undefined)?.uid;
  if (d.kind !== 'Deployment' || !name || !namespace || !uid) return 0;
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const hash = templateHash(d);
  const rsName = `${name}-${hash}`;
  const spec = d.spec ?? {};
  const template = (spec.template ?? {}) as { metadata?: { labels?: Record<string, string> }; spec?: Obj };
  const labels = { ...(template.metadata?.labels ?? {}), 'pod-template-hash': hash };
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
  let made = 0;
  let rs;
  try {
    rs = await apps.createNamespacedReplicaSet({
      namespace,
      body: {
        metadata: { name: rsName, labels, ownerReferences: [ownerRef('apps/v1', 'Deployment', name, uid)] },
        spec: {
          replicas,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: template.spec as never },
        },
      },
    });
    made++;
  } catch (err) {
    if (!conflict(err)) throw err;
    rs = await apps.readNamespacedReplicaSet({ name: rsName, namespace });
  }
  // The serviceaccount controller gives every namespace its `default` ServiceAccount, which the
  // ServiceAccount admission plugin requires of a Pod that names none.
  await core
    .createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } })
    .catch((err: unknown) => {
      if (!conflict(err)) throw err;
    });
  for (let i = 0; i < replicas; i++) {
    try {
      await core.createNamespacedPod({
        namespace,
        body: {
          metadata: {
            name: `${rsName}-${String(i).padStart(5, 'x')}`,
            labels,
            ownerReferences: [ownerRef('apps/v1', 'ReplicaSet', rsName, rs.metadata!.uid!)],
          },
          spec: template.spec as never,
        },
      });
      made++;
    } catch (err) {
      if (!conflict(err)) throw err;
    }
  }
  return made;
}

/** What the replicaset controller writes into a ReplicaSet's status once its Pods are there. */
export function replicaSetStatus(w: Workload): Obj {
  const n = typeof w.spec?.replicas === 'number' ? w.spec.replicas : 1;
  return {
    observedGeneration: w.metadata?.generation ?? 1,
    replicas: n,
    fullyLabeledReplicas: n,
    readyReplicas: n,
    availableReplicas: n,
  };
}
