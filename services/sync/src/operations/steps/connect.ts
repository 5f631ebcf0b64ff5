// Step 2 of a sync attempt: connect to the destination as the decided identity, discover the
// rendered objects there (scopes, namespaces), hand Capstan's own objects to the delivery path,
// read the sync options, and check every resource against the project chain.
import type { Application } from '@capstan/policy';
import { checkResources } from '../../decision/decide.js';
import type { TargetCluster } from '../../kube/target-cluster.js';
import { connectToDestination } from '../../decision/destination.js';
import type { KubeObject } from '../../manifests/manifest-source.js';
import { discover, managedNamespace } from '../../apply/discover.js';
import { groupOf } from '../../apply/plan.js';
import { parseAppSyncOptions, type AppSyncOptions } from '../../apply/sync-options.js';
import { controlPlaneResources, partitionObjects } from '../../delivery/control-plane-objects.js';
import { Selection } from '../../apply/selective.js';
import { StepFailed, type SyncAttempt } from '../sync-attempt.js';
import type { Resolved } from './resolve-inputs.js';

export interface Connected extends Resolved {
  cluster: TargetCluster;
  server: string;
  destNamespace: string;
  /** The cluster's objects, namespaces filled in. */
  objects: KubeObject[];
  delivered: ReturnType<typeof controlPlaneResources>;
  /** Argo CD's selective sync: what the request named (everything when it named nothing). */
  selection: Selection;
  /** CreateNamespace=true: the destination namespace to create first (with managedNamespaceMetadata). */
  createNamespace: KubeObject | undefined;
  syncPolicy: Application['spec']['syncPolicy'];
  options: AppSyncOptions;
}

export async function connect(a: SyncAttempt, resolved: Resolved): Promise<Connected | StepFailed> {
  const { deps } = a;
  const { decided } = resolved;
  const { decision, rendered } = decided;
  a.identity = { impersonation: decision.impersonation, username: decision.username };
  const { cluster, clusterRef, server, destNamespace } = await connectToDestination(deps, decided);

  // Capstan's own objects go to the api; the rest are discovered on the cluster, as the sync identity.
  const parts = partitionObjects(rendered.objects, { filter: deps.settings.resourceFilter, server });
  const found = await discover(cluster, parts.cluster, { destNamespace, clusterName: clusterRef.name });
  const delivered = controlPlaneResources(parts.controlPlane, destNamespace);
  const problems = [...found.problems, ...delivered.problems];
  if (problems.length > 0) return new StepFailed('decision', problems.join('; '));
  // A selective sync writes (and so is checked for) only what it names; hooks do not run.
  const selection = Selection.of(a.request.resources);
  found.objects = selection.objects(found.objects);
  delivered.objects = selection.objects(delivered.objects);
  const resources = [...found.resources, ...delivered.resources].filter((r) => selection.includes(r));

  const syncPolicy = decided.application.spec.syncPolicy;
  const options = parseAppSyncOptions(syncPolicy?.syncOptions);
  const createNamespace = managedNamespace(options, syncPolicy, destNamespace, found.objects);
  if (createNamespace)
    resources.push({ group: '', kind: 'Namespace', namespaced: false, name: destNamespace });

  a.setAuditIdentity(cluster.identityName);
  // Kinds argocd-cm excludes are not synced, as Argo CD; each one said (audit row and event).
  for (const { object, message } of parts.excluded)
    a.record({
      verb: 'check',
      group: groupOf(object.apiVersion),
      kind: object.kind,
      namespace: object.metadata.namespace ?? (destNamespace || null),
      name: object.metadata.name,
      status: 'ExcludedResourceWarning',
      httpStatus: null,
      message,
    });
  // Options Argo CD does not know are ignored, as Argo does, but said (audit row and event).
  for (const warning of options.warnings)
    a.record({
      verb: 'check',
      group: 'argoproj.io',
      kind: 'Application',
      namespace: a.app.namespace,
      name: a.app.name,
      status: 'SyncOptionWarning',
      httpStatus: null,
      message: warning,
    });
  const checked = checkResources(decided, resources);
  const denied = checked.checks.filter((c) => !c.allowed);
  if (denied.length > 0) {
    for (const c of denied)
      a.record({
        verb: 'check',
        group: '',
        kind: '',
        namespace: null,
        name: '',
        status: 'Refused',
        httpStatus: null,
        message: c.reason,
      });
    return new StepFailed('decision', denied.map((c) => c.reason).join('; '));
  }
  return {
    ...resolved,
    cluster,
    server,
    destNamespace,
    objects: found.objects,
    delivered,
    selection,
    createNamespace,
    syncPolicy,
    options,
  };
}
