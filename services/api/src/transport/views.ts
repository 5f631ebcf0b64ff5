// What the API returns: the proto JSON mapping of capstan.api.v1 messages, built from the domain.
// gRPC turns these into messages with Msg.fromJSON; HTTP sends them as they are.
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import type { StoredProject } from '../projects/project.repository.js';
import type { StoredApplication, SyncOperationRecord } from '../applications/application.repository.js';
import type { StoredCluster } from '../clusters/cluster.repository.js';
import type { AccountView } from '../accounts/accounts.service.js';
import type { ApiTokenRecord } from '../accounts/account.repository.js';

type Json = Record<string, unknown>;

function meta(
  m: { name: string; namespace?: string | undefined; labels?: unknown; annotations?: unknown },
  version: number,
  uid: string,
  createdAt: Date,
): Json {
  return {
    name: m.name,
    namespace: m.namespace ?? DEFAULT_CONTROL_NAMESPACE,
    ...(m.labels ? { labels: m.labels } : {}),
    ...(m.annotations ? { annotations: m.annotations } : {}),
    resourceVersion: version,
    creationTimestamp: createdAt.toISOString(),
    uid,
  };
}

export function projectView(p: StoredProject): Json {
  return { metadata: meta(p.project.metadata, p.version, p.uid, p.createdAt), spec: p.project.spec };
}

export function operationView(op: SyncOperationRecord): Json {
  return {
    id: op.id,
    application: `${op.appNamespace}/${op.appName}`,
    project: op.project,
    phase: op.phase,
    message: op.message,
    revision: op.revision,
    dryRun: op.dryRun,
    prune: op.prune,
    initiatedBy: op.initiatedBy,
    startedAt: (op.startedAt ?? op.requestedAt).toISOString(),
    finishedAt: op.finishedAt?.toISOString() ?? '',
    identity: op.identity,
    impersonated: op.impersonated,
    resources: op.resources,
  };
}

export function applicationView(a: StoredApplication, operation?: SyncOperationRecord): Json {
  return {
    metadata: meta(a.application.metadata, a.version, a.uid, a.createdAt),
    spec: a.application.spec,
    status: {
      syncStatus: a.syncStatus,
      healthStatus: a.healthStatus,
      ...(operation ? { operation: operationView(operation) } : {}),
      revision: a.revision ?? '',
      reconciledAt: a.reconciledAt?.toISOString() ?? '',
    },
  };
}

export function clusterView(c: StoredCluster): Json {
  const { cluster } = c;
  return {
    metadata: meta(
      { name: cluster.name, namespace: DEFAULT_CONTROL_NAMESPACE, labels: cluster.labels },
      c.version,
      c.uid,
      c.createdAt,
    ),
    server: cluster.server,
    name: cluster.name,
    namespaces: cluster.namespaces,
    project: cluster.project ?? '',
    credentialType: cluster.credentialType,
    insecure: cluster.insecure,
    serverName: cluster.serverName,
    hasCaData: cluster.hasCaData,
    credentialKeyId: cluster.keyId,
  };
}

export function tokenView(t: ApiTokenRecord): Json {
  return { id: t.id, issuedAt: t.issuedAt.toISOString(), expiresAt: t.expiresAt?.toISOString() ?? '' };
}

export function accountView(a: AccountView): Json {
  return {
    name: a.name,
    enabled: a.enabled,
    capabilities: a.capabilities,
    groups: a.groups,
    tokens: a.tokens.map(tokenView),
  };
}
