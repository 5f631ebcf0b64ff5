// How a sync says Kubernetes refused one of its requests: the identity, the verb as RBAC names it,
// the resource and where, and the API server's own message.
import { httpStatusOf, kubeMessageOf } from '../kube/kube-errors.js';
import { type TargetCluster } from '../kube/target-cluster.js';
import { groupOf, type ObjectRef } from './plan.js';

const VERB_OF: Record<string, string> = { apply: 'patch', delete: 'delete', get: 'get' };

function plural(kind: string): string {
  const k = kind.toLowerCase();
  return k.endsWith('s') ? `${k}es` : k.endsWith('y') ? `${k.slice(0, -1)}ies` : `${k}s`;
}

/** "system:serviceaccount:team-a:deployer may not patch configmaps "x" in namespace "team-a": ..." */
export function refusal(cluster: TargetCluster, verb: string, ref: ObjectRef, err: unknown): string {
  const where = ref.namespace ? ` in namespace ${JSON.stringify(ref.namespace)}` : ' (cluster-scoped)';
  const status = httpStatusOf(err);
  const what = `${plural(ref.kind)}${groupOf(ref.apiVersion) ? `.${groupOf(ref.apiVersion)}` : ''} ${JSON.stringify(ref.name)}`;
  if (status === 403)
    return `${cluster.identityName} may not ${VERB_OF[verb] ?? verb} ${what}${where}: ${kubeMessageOf(err)}`;
  return `${verb} ${what}${where} as ${cluster.identityName} failed${status ? ` (HTTP ${status})` : ''}: ${kubeMessageOf(err)}`;
}
