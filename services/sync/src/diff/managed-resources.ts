// ManagedResources (what `capstan app diff` shows): the Application's objects rendered as a sync
// renders them, its identity resolved as a sync resolves it (decideSync), each object read fresh
// from the cluster AS THAT IDENTITY, plus the objects it still tracks that git no longer declares,
// compared with @capstan/diff. A read the identity may not do is an error item: never retried with
// the control plane's credentials. Secrets' values are masked in everything returned.
import { randomUUID } from 'node:crypto';
import {
  compareResource,
  compileIgnoreDifferences,
  hideSecretData,
  type IgnoreDifference,
  type IgnoreRules,
  type KubeObjectLike,
} from '@capstan/diff';
import { explainSync } from '@capstan/policy';
import type { apiv1 } from '@capstan/proto';
import { FailedPreconditionError, NotFoundError, type Logger } from '@capstan/service';
import type { SyncDb } from '../sync.table.js';
import { decideSync, type Decided, type DecisionSettings } from '../decision/decide.js';
import { connectToDestination } from '../decision/destination.js';
import { loadSyncInputs } from '../decision/sync-inputs.repository.js';
import type { KubeObject, ManifestSource } from '../manifests/manifest-source.js';
import type { ClusterCredentialsSource } from '../kube/cluster-credentials.js';
import type { TargetClusterPool } from '../kube/target-cluster-pool.js';
import { FIELD_MANAGER, type TargetCluster } from '../kube/target-cluster.js';
import { httpStatusOf, kubeMessageOf } from '../kube/kube-errors.js';
import { discover } from '../apply/discover.js';
import { partitionObjects, isControlPlaneRef, isExcludedRef } from '../delivery/control-plane-objects.js';
import { groupOf, HOOK_ANNOTATION, refKey, type ObjectRef } from '../apply/plan.js';
import { ownershipOf, trackingContext, withTracking, type TrackingContext } from '../apply/tracking.js';

export interface ManagedResourcesDeps {
  db: SyncDb;
  credentials: ClusterCredentialsSource;
  manifests: ManifestSource;
  clusters: TargetClusterPool;
  settings: DecisionSettings;
  logger: Logger;
  /** System-level ignoreDifferences (argocd-cm resource.customizations), added to the Application's. */
  systemIgnoreDifferences?: readonly IgnoreDifference[];
}

/** Argo CD's ResourceDiff (the contract's type): states as JSON strings ('' when absent), plus an error for unreadable ones. */
export type ManagedResource = apiv1.ResourceDiff;

/** How many objects are read from the cluster at once. */
const READ_CONCURRENCY = 8;

const json = (obj: unknown): string => (obj === undefined ? '' : JSON.stringify(obj));

/** The decision a sync would make, without the sync windows: a window governs syncs, not reads. */
function identityDecision(decided: Decided) {
  if (decided.decision.allowed) return decided.decision;
  const { now: _now, manual: _manual, ...withoutWindows } = decided.explainInput;
  return explainSync(withoutWindows);
}

/**
 * What reading an Application's objects needs (ManagedResources, the resource tree, events): its
 * objects rendered and the identity decided as a sync would, the cluster connected as that
 * identity, and the work list (declared objects, then those it still tracks).
 */
export async function managedRead(
  deps: Omit<ManagedResourcesDeps, 'logger'>,
  app: { namespace: string; name: string },
) {
  const inputs = await loadSyncInputs(deps.db, app);
  const request = { operationId: `diff-${randomUUID()}`, application: app, dryRun: true, prune: false };
  const decided = await decideSync(inputs, request, deps.manifests, deps.settings);
  if (!('decision' in decided)) {
    if (!decided.application) throw new NotFoundError(decided.reason);
    throw new FailedPreconditionError(decided.reason);
  }
  const { cluster, clusterRef, server, destNamespace } = await connectAs(deps, decided);
  // Capstan's own objects (argoproj.io) live in the control plane, not on the cluster: not read here.
  const filtered = { filter: deps.settings.resourceFilter, server };
  const parts = partitionObjects(decided.rendered.objects, filtered);
  const found = await discover(cluster, parts.cluster, {
    destNamespace,
    clusterName: clusterRef.name,
  });
  if (found.problems.length > 0) throw new FailedPreconditionError(found.problems.join('; '));
  const tracking = trackingContext(app, deps.settings.controlNamespace, destNamespace);
  const applied = (inputs.applied.get(server) ?? []).filter((r) => !isExcludedRef(r, filtered));
  return { decided, cluster, tracking, work: workItems(found.objects, tracking, applied) };
}

export async function managedResources(
  deps: ManagedResourcesDeps,
  app: { namespace: string; name: string },
): Promise<ManagedResource[]> {
  const { decided, cluster, tracking, work } = await managedRead(deps, app);
  const spec = decided.application.spec as { ignoreDifferences?: IgnoreDifference[] };
  const ignore = await compileIgnoreDifferences([
    ...(deps.systemIgnoreDifferences ?? deps.settings.systemIgnoreDifferences ?? []),
    ...(spec.ignoreDifferences ?? []),
  ]);
  const compare = (w: WorkItem) => compareOne(cluster, w, { tracking, ignore });
  const out: ManagedResource[] = [];
  for (let i = 0; i < work.length; i += READ_CONCURRENCY) {
    const batch = await Promise.all(work.slice(i, i + READ_CONCURRENCY).map(compare));
    for (const item of batch) if (item) out.push(item);
  }
  return out;
}

/** The destination cluster, as the identity a sync would use (the same decision). */
async function connectAs(deps: Pick<ManagedResourcesDeps, 'clusters' | 'credentials'>, decided: Decided) {
  const decision = identityDecision(decided);
  if (!decision.allowed) throw new FailedPreconditionError(decision.reason);
  return connectToDestination(deps, decided, decision);
}

export interface WorkItem {
  ref: ObjectRef;
  /** The desired object with its tracking id; absent: applied before, no longer declared. */
  target?: KubeObjectLike;
  hook: boolean;
}

/** Every declared object, then every object applied before that git no longer declares. */
function workItems(
  objects: readonly KubeObject[],
  tracking: TrackingContext,
  applied: readonly ObjectRef[],
): WorkItem[] {
  const work: WorkItem[] = objects.map((o) => {
    const ref: ObjectRef = {
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.metadata.name,
      namespace: o.metadata.namespace,
    };
    const hook = o.metadata.annotations?.[HOOK_ANNOTATION] !== undefined;
    return { ref, target: withTracking(o, tracking, ref) as KubeObjectLike, hook };
  });
  const declared = new Set(work.map((w) => refKey(w.ref)));
  for (const ref of applied) {
    if (!isControlPlaneRef(ref) && !declared.has(refKey(ref))) work.push({ ref, hook: false });
  }
  return work;
}

/** One resource: live (as the identity) against desired, Argo CD's comparison; undefined when not listed. */
async function compareOne(
  cluster: TargetCluster,
  w: WorkItem,
  opts: { tracking: TrackingContext; ignore: IgnoreRules },
): Promise<ManagedResource | undefined> {
  const base = {
    group: groupOf(w.ref.apiVersion),
    kind: w.ref.kind,
    namespace: w.ref.namespace ?? '',
    name: w.ref.name,
    hook: w.hook,
  };
  // Hooks are not part of the comparison (Argo CD leaves them out of the sync status).
  if (w.hook)
    return { ...base, ...states(w.target, undefined), modified: false, resourceVersion: '', error: '' };
  let live: KubeObjectLike | undefined;
  try {
    live = await readLive(cluster, w.ref);
  } catch (err) {
    const status = httpStatusOf(err);
    if (status === undefined || status >= 500) throw err;
    const what = status === 403 ? `${cluster.identityName} may not read it` : `reading it failed (${status})`;
    const error = `${what}: ${kubeMessageOf(err)}`;
    return { ...base, ...states(w.target, undefined), modified: false, resourceVersion: '', error };
  }
  // An object git no longer declares is listed while it is still this Application's.
  if (!w.target && (!live || ownershipOf(live, opts.tracking, w.ref).kind !== 'owned')) return undefined;
  const result = compareResource(w.target, live, { ignore: opts.ignore, fieldManager: FIELD_MANAGER });
  const resourceVersion = String(
    (live?.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion ?? '',
  );
  return {
    ...base,
    ...states(w.target, live),
    normalizedLiveState: json(result.normalizedLive),
    predictedLiveState: w.target && live ? json(result.predictedLive) : '',
    modified: result.status === 'OutOfSync',
    resourceVersion,
    error: '',
  };
}

export async function readLive(cluster: TargetCluster, ref: ObjectRef): Promise<KubeObjectLike | undefined> {
  const live = await cluster.read(ref);
  // The client's typed objects (Dates, class instances) as the plain JSON the API server sent.
  return live === undefined ? undefined : (JSON.parse(JSON.stringify(live)) as KubeObjectLike);
}

function states(target: KubeObjectLike | undefined, live: KubeObjectLike | undefined) {
  const [t, l] = hideSecretData(target, live);
  return { targetState: json(t), liveState: json(l), normalizedLiveState: '', predictedLiveState: '' };
}
