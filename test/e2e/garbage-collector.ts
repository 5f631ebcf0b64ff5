// The test API servers run no kube-controller-manager, so nothing finishes what a foreground delete
// starts (Argo CD's default propagation for cascade deletion): the object keeps its
// `foregroundDeletion` finalizer. collectForegroundDeletions plays the garbage collector for
// ConfigMaps, which have no dependents: it removes that finalizer, as the collector would at once.
import type { CoreV1Api } from '@kubernetes/client-node';

export async function collectForegroundDeletions(core: CoreV1Api, namespace: string): Promise<void> {
  for (const c of (await core.listNamespacedConfigMap({ namespace })).items) {
    if (!c.metadata?.deletionTimestamp || !c.metadata.finalizers?.includes('foregroundDeletion')) continue;
    await core
      .replaceNamespacedConfigMap({
        namespace,
        name: c.metadata.name!,
        body: { ...c, metadata: { ...c.metadata, finalizers: [] } },
      })
      .catch(() => undefined); // gone or changed meanwhile: the next round looks again
  }
}
