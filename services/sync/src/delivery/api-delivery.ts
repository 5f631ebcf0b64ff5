// Where control-plane objects go: the api, which owns projects and Applications, over authenticated
// internal gRPC (capstan.api.v1.DeliveredObjectsService/Apply). A port, so the service's tests can
// hand in their own api.
import { apiv1, unary } from '@capstan/proto';
import type { ServiceClient } from '@capstan/service-identity';
import type { KubeObject } from '../manifests/manifest-source.js';

export interface DeliveredResult {
  kind: string;
  namespace: string;
  name: string;
  action: string;
  /** Synced, SyncFailed, Pruned, PruneSkipped. */
  status: string;
  message: string;
}

export interface DeliverRequest {
  application: { namespace: string; name: string };
  operationId: string;
  objects: readonly KubeObject[];
  prune: boolean;
  dryRun: boolean;
  cascadeDelete: boolean;
}

export interface DeliveredObjects {
  deliver(request: DeliverRequest): Promise<{ applied: boolean; results: DeliveredResult[] }>;
  close?(): void;
}

export function apiDeliveredObjects(options: { address: string; identity: ServiceClient }): DeliveredObjects {
  const client = new apiv1.DeliveredObjectsServiceClient(options.address, options.identity.credentials);
  return {
    async deliver(request) {
      const res = await unary(
        client.apply.bind(client),
        {
          applicationNamespace: request.application.namespace,
          applicationName: request.application.name,
          operationId: request.operationId,
          objectsJson: request.objects.map((o) => JSON.stringify(o)),
          prune: request.prune,
          dryRun: request.dryRun,
          cascadeDelete: request.cascadeDelete,
        },
        { metadata: options.identity.metadata(), timeoutMs: 30_000 },
      );
      return { applied: res.applied, results: res.results };
    },
    close: () => client.close(),
  };
}
