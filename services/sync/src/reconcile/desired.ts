// Desired state of one Application: what a sync would apply, resolved exactly as a sync resolves it
// (decision/decide.ts: the read model, the project chain, the ServiceAccount; the ManifestSource at
// the resolved revision; discovery as that identity), minus what is not compared — hooks (Argo CD
// does not compare them) and Capstan's own argoproj.io objects (they live in the api, not the
// cluster). It also names the informers the comparison reads: the kinds and namespaces declared
// now, and those the Application applied in its last sync (prune candidates). Loaded on the
// reconciler's refresh triggers only, never per watch event.
import { canonicalDigest, type Application } from '@capstan/policy';
import { compileIgnoreDifferences, type IgnoreDifference, type IgnoreRules } from '@capstan/diff';
import type { KubeObject, ManifestSource } from '../manifests/manifest-source.js';
import type { ClusterCredentialsSource } from '../kube/cluster-credentials.js';
import type { TargetClusterPool } from '../kube/target-cluster-pool.js';
import type { ClusterConnection, SyncIdentity } from '../kube/kube-config.js';
import { decideSync, type DecisionSettings } from '../decision/decide.js';
import { connectToDestination } from '../decision/destination.js';
import { loadSyncInputs } from '../decision/sync-inputs.repository.js';
import { discover } from '../apply/discover.js';
import { groupOf, planSync, PlanError, type ObjectRef } from '../apply/plan.js';
import { trackingContext, withTracking, type TrackingContext } from '../apply/tracking.js';
import { isControlPlaneRef, isExcludedRef, partitionObjects } from '../delivery/control-plane-objects.js';
import type { SyncDbOrTrx } from '../sync.table.js';
import type { WatchKey } from './watch-key.js';

export interface DesiredResource {
  object: KubeObject;
  ref: ObjectRef;
  watch: WatchKey;
}

export interface DesiredState {
  ok: true;
  application: Application;
  specHash: string;
  revision: string | undefined;
  /** A multi-source Application's commit per source. */
  revisions?: string[] | undefined;
  identity: SyncIdentity;
  connection: ClusterConnection;
  tracking: TrackingContext;
  resources: DesiredResource[];
  /** Every informer the comparison reads (declared kinds and those applied last time). */
  watches: WatchKey[];
  ignore: IgnoreRules;
  /** Projects of the chain: a change to any of them refreshes this Application. */
  projectChain: readonly string[];
  /** Argo CD's ExcludedResourceWarning messages: declared objects argocd-cm excludes. */
  excluded: string[];
  server: string;
}

/** The comparison cannot be made: why (Unknown, Argo's ComparisonError). */
export interface DesiredFailure {
  ok: false;
  application: Application | undefined;
  specHash: string;
  message: string;
  revision?: string | undefined;
  revisions?: string[] | undefined;
}

export interface DesiredDeps {
  db: SyncDbOrTrx;
  manifests: ManifestSource;
  credentials: ClusterCredentialsSource;
  clusters: TargetClusterPool;
  settings: DecisionSettings;
}

export function specHashOf(application: unknown): string {
  return canonicalDigest((application as { spec?: unknown } | undefined)?.spec ?? null, 'spec');
}

export async function loadDesired(
  deps: DesiredDeps,
  app: { namespace: string; name: string },
): Promise<DesiredState | DesiredFailure> {
  const inputs = await loadSyncInputs(deps.db, app);
  const specHash = specHashOf(inputs.application);
  const request = {
    operationId: `reconcile:${app.namespace}/${app.name}`,
    application: app,
    dryRun: false,
    prune: false,
  };
  // An Application being deleted is not synced, but its status is still observed (Argo CD): the
  // decision is made without the mark, which goes back on for automation to see.
  const deleting = deletionTimestampOf(inputs.application);
  const undeleted = deleting ? { ...inputs, application: withoutDeletion(inputs.application) } : inputs;
  const decided = await decideSync(undeleted, request, deps.manifests, deps.settings, { windows: false });
  if (!('decision' in decided))
    return { ok: false, application: decided.application, specHash, message: decided.reason };
  const { decision, application, rendered } = decided;
  if (deleting) (application.metadata as Record<string, unknown>).deletionTimestamp = deleting;
  const revision = rendered.revision ?? undefined;
  const revisions = rendered.revisions;
  const fail = (message: string): DesiredFailure => ({
    ok: false,
    application,
    specHash,
    message,
    revision,
    ...(revisions ? { revisions } : {}),
  });
  if (!decision.allowed) return fail(decision.reason);
  const {
    identity,
    server,
    clusterRef,
    destNamespace,
    connection,
    cluster: client,
  } = await connectToDestination(deps, decided);
  // Discovery answers once per kind for this load (discover() and the watch keys both ask).
  const scopes = new Map<string, ReturnType<typeof client.scope>>();
  const cluster = {
    scope(apiVersion: string, kind: string) {
      const key = `${apiVersion}\u0000${kind}`;
      let answer = scopes.get(key);
      if (!answer) scopes.set(key, (answer = client.scope(apiVersion, kind)));
      return answer;
    },
  };
  const parts = partitionObjects(rendered.objects, { filter: deps.settings.resourceFilter, server });
  const found = await discover(cluster, parts.cluster, {
    destNamespace,
    clusterName: clusterRef.name,
  });
  if (found.problems.length > 0) return fail(found.problems.join('; '));
  let plan;
  try {
    plan = planSync(found.objects);
  } catch (err) {
    if (err instanceof PlanError) return fail(`invalid manifests: ${err.message}`);
    throw err;
  }
  const tracking = trackingContext(app, deps.settings.controlNamespace, destNamespace);
  const username = identity.kind === 'service-account' ? identity.username : '';
  const watchOf = async (ref: ObjectRef): Promise<WatchKey | undefined> => {
    const scope = await cluster.scope(ref.apiVersion, ref.kind);
    if (!scope) return undefined;
    const version = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[1]! : ref.apiVersion;
    return {
      server,
      username,
      namespace: scope.namespaced ? (ref.namespace ?? '') : '',
      group: groupOf(ref.apiVersion),
      version,
      resource: scope.resource,
      kind: ref.kind,
    };
  };
  const resources: DesiredResource[] = [];
  for (const o of plan.resources) {
    const watch = (await watchOf(o.ref))!;
    resources.push({ object: withTracking(o.object, tracking, o.ref), ref: o.ref, watch });
  }
  const filtered = { filter: deps.settings.resourceFilter, server };
  const applied = (inputs.applied.get(server) ?? []).filter((r) => !isExcludedRef(r, filtered));
  const watches = await watchesOf(resources, applied, watchOf);
  const ignore = await compileIgnoreDifferences([
    ...(deps.settings.systemIgnoreDifferences ?? []),
    ...((application.spec.ignoreDifferences ?? []) as unknown as IgnoreDifference[]),
  ]);
  return {
    ok: true,
    application,
    specHash,
    revision,
    ...(revisions ? { revisions } : {}),
    identity,
    connection,
    tracking,
    resources,
    watches,
    ignore,
    projectChain: decision.projectChain,
    excluded: parts.excluded.map((e) => e.message),
    server,
  };
}

function deletionTimestampOf(manifest: unknown): unknown {
  return (manifest as { metadata?: { deletionTimestamp?: unknown } } | undefined)?.metadata
    ?.deletionTimestamp;
}

function withoutDeletion(manifest: unknown): unknown {
  const m = manifest as { metadata: Record<string, unknown> };
  const { deletionTimestamp: _deleting, ...metadata } = m.metadata;
  return { ...m, metadata };
}

async function watchesOf(
  resources: readonly DesiredResource[],
  applied: readonly ObjectRef[],
  watchOf: (ref: ObjectRef) => Promise<WatchKey | undefined>,
): Promise<WatchKey[]> {
  const out = new Map<string, WatchKey>();
  const add = (k: WatchKey) =>
    out.set(`${k.namespace}\u0000${k.group}\u0000${k.version}\u0000${k.resource}`, k);
  for (const r of resources) add(r.watch);
  for (const ref of applied) {
    if (isControlPlaneRef(ref)) continue;
    const k = await watchOf(ref);
    if (k) add(k);
  }
  return [...out.values()];
}
