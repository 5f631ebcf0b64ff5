// Where and as whom a decision writes: the one way a sync, a cascade deletion, the reconciler and a
// diff (ManagedResources) reach the destination cluster, so all four always use the same identity.
import type { SyncDecision } from '@capstan/policy';
import type { ClusterCredentialsSource } from '../kube/cluster-credentials.js';
import type { TargetClusterPool } from '../kube/target-cluster-pool.js';
import type { ClusterConnection, SyncIdentity } from '../kube/kube-config.js';
import type { TargetCluster } from '../kube/target-cluster.js';
import type { Decided } from './decide.js';

export interface DecidedDestination {
  /** The ServiceAccount the decision resolved (impersonation), or the control plane's own credentials. */
  identity: SyncIdentity;
  server: string;
  /** The registered cluster of that server (its name for messages), or the URL as its name. */
  clusterRef: { name: string; server: string };
  destNamespace: string;
  connection: ClusterConnection;
  cluster: TargetCluster;
}

export function syncIdentityOf(decision: SyncDecision): SyncIdentity {
  return decision.impersonation
    ? { kind: 'service-account', username: decision.username ?? '' }
    : { kind: 'control-plane' };
}

/** Connects to an allowed decision's destination as its identity (`decision` defaults to the decided one). */
export async function connectToDestination(
  deps: { clusters: TargetClusterPool; credentials: ClusterCredentialsSource },
  decided: Decided,
  decision: SyncDecision = decided.decision,
): Promise<DecidedDestination> {
  const identity = syncIdentityOf(decision);
  const server = decision.destination.server!;
  const clusterRef = decided.clusters.byServerUrl(server) ?? { name: server, server };
  const connection = await deps.credentials.get(clusterRef);
  return {
    identity,
    server,
    clusterRef,
    destNamespace: decision.destination.namespace,
    connection,
    cluster: deps.clusters.get(connection, identity),
  };
}
