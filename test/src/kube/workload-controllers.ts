// A stand-in for kube-controller-manager's workload controllers and a one-node kubelet, for the test
// and demo API servers, which run neither: it watches Deployments, StatefulSets, DaemonSets, Jobs and
// Pods as the cluster admin and writes their status subresource as those controllers would
// (workload-status.ts says what it writes and the conventions for an image that never pulls, a
// container's exit code and objects a test drives by hand). Without it no Deployment ever becomes
// available here, so Argo CD's health rules would rightly call every workload Progressing.
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { controllerStatus, statusChanged, type Workload } from './workload-status.js';
import { ensureOwnedObjects, replicaSetStatus } from './owned-workloads.js';

export interface WorkloadControllers {
  /** Status writes so far (for tests that wait for the stand-in to have acted). */
  readonly writes: number;
  stop(): Promise<void>;
}

type Patch = (name: string, namespace: string, status: Record<string, unknown>) => Promise<unknown>;

interface KindWatch {
  kind: string;
  path: string;
  list: () => Promise<KubernetesListObject<KubernetesObject>>;
  patch: Patch;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function kindWatches(kc: KubeConfig, ownedObjects: boolean): KindWatch[] {
  const apps = kc.makeApiClient(AppsV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const list = (p: Promise<unknown>) => p as Promise<KubernetesListObject<KubernetesObject>>;
  const replicaSets: KindWatch[] = ownedObjects
    ? [
        {
          kind: 'ReplicaSet',
          path: '/apis/apps/v1/replicasets',
          list: () => list(apps.listReplicaSetForAllNamespaces()),
          patch: (name, namespace, status) =>
            apps.patchNamespacedReplicaSetStatus({ name, namespace, body: { status } }, mergePatch),
        },
      ]
    : [];
  return [
    ...replicaSets,
    {
      kind: 'Deployment',
      path: '/apis/apps/v1/deployments',
      list: () => list(apps.listDeploymentForAllNamespaces()),
      patch: (name, namespace, status) =>
        apps.patchNamespacedDeploymentStatus({ name, namespace, body: { status } }, mergePatch),
    },
    {
      kind: 'StatefulSet',
      path: '/apis/apps/v1/statefulsets',
      list: () => list(apps.listStatefulSetForAllNamespaces()),
      patch: (name, namespace, status) =>
        apps.patchNamespacedStatefulSetStatus({ name, namespace, body: { status } }, mergePatch),
    },
    {
      kind: 'DaemonSet',
      path: '/apis/apps/v1/daemonsets',
      list: () => list(apps.listDaemonSetForAllNamespaces()),
      patch: (name, namespace, status) =>
        apps.patchNamespacedDaemonSetStatus({ name, namespace, body: { status } }, mergePatch),
    },
    {
      kind: 'Job',
      path: '/apis/batch/v1/jobs',
      list: () => list(batch.listJobForAllNamespaces()),
      patch: (name, namespace, status) =>
        batch.patchNamespacedJobStatus({ name, namespace, body: { status } }, mergePatch),
    },
    {
      kind: 'Pod',
      path: '/api/v1/pods',
      list: () => list(core.listPodForAllNamespaces()),
      patch: (name, namespace, status) =>
        core.patchNamespacedPodStatus({ name, namespace, body: { status } }, mergePatch),
    },
  ];
}

/**
 * Starts the stand-in on a cluster, as its admin (`kc`). Objects being deleted are left alone; a
 * status write that fails (the object changed or went meanwhile) is retried on the next event.
 */
export async function startWorkloadControllers(
  kc: KubeConfig,
  options: {
    log?: (line: string) => void;
    /** Also make each Deployment's ReplicaSet and Pods, owned as the controllers own them (owned-workloads.ts). */
    ownedObjects?: boolean;
  } = {},
): Promise<WorkloadControllers> {
  const firstSeen = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const informers = new Map<
    string,
    Informer<KubernetesObject> & { get(name: string, namespace?: string): KubernetesObject | undefined }
  >();
  let writes = 0;
  let stopped = false;

  const reconcile = async (watch: KindWatch, obj: KubernetesObject): Promise<void> => {
    const w = obj as Workload & KubernetesObject;
    if (stopped || !w.metadata?.name || !w.metadata.namespace) return;
    if ((w.metadata as { deletionTimestamp?: unknown }).deletionTimestamp) return;
    const key = `${watch.kind}/${w.metadata.namespace}/${w.metadata.name}@${w.metadata.generation ?? 0}`;
    const now = Date.now();
    if (!firstSeen.has(key)) firstSeen.set(key, now);
    if (options.ownedObjects && watch.kind === 'Deployment')
      await ensureOwnedObjects(kc, w).catch((err: unknown) =>
        options.log?.(`workload controllers: objects of ${key} not made: ${(err as Error).message}`),
      );
    const next =
      watch.kind === 'ReplicaSet'
        ? replicaSetStatus(w)
        : controllerStatus(w, { firstSeen: firstSeen.get(key)!, now });
    if (!next) return;
    scheduleDeadline(watch, w, firstSeen.get(key)!);
    if (!statusChanged(w.status, next)) return;
    try {
      await watch.patch(w.metadata.name, w.metadata.namespace, next);
      writes++;
    } catch (err) {
      options.log?.(`workload controllers: status of ${key} not written: ${(err as Error).message}`);
    }
  };

  // A Deployment that cannot progress passes its deadline with no event to say so: look again then.
  const scheduleDeadline = (watch: KindWatch, w: Workload & KubernetesObject, since: number) => {
    const seconds = w.spec?.progressDeadlineSeconds;
    if (watch.kind !== 'Deployment' || typeof seconds !== 'number') return;
    const due = since + seconds * 1000 - Date.now();
    if (due <= 0 || due > 3_600_000) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      const current = informers.get(watch.kind)?.get(w.metadata!.name!, w.metadata!.namespace);
      if (current) void reconcile(watch, current);
    }, due + 50);
    timers.add(timer);
  };

  for (const watch of kindWatches(kc, options.ownedObjects === true)) {
    const informer = makeInformer(kc, watch.path, watch.list);
    informer.on('add', (o) => void reconcile(watch, o));
    informer.on('update', (o) => void reconcile(watch, o));
    // A dropped watch restarts after a pause (the informer does not restart itself).
    informer.on('error', () => {
      if (!stopped) setTimeout(() => void informer.start().catch(() => undefined), 1_000);
    });
    informers.set(watch.kind, informer);
  }
  await Promise.all([...informers.values()].map((i) => i.start()));
  return {
    get writes() {
      return writes;
    },
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      await Promise.all([...informers.values()].map((i) => i.stop()));
    },
  };
}
