// Where a target cluster's control-plane credentials come from: the api, over authenticated
// internal gRPC (capstan.api.v1.ClusterCredentials/Get), never the bus. A port, so the service's
// tests can hand in the credentials of the real test API servers they start.
import { apiv1, unary } from '@capstan/proto';
import { fromPeer, type ServiceClient } from '@capstan/service-identity';
import type { ClusterRef } from '@capstan/policy';
import type { ClusterConnection } from './kube-config.js';

export interface ClusterCredentialsSource {
  get(cluster: ClusterRef): Promise<ClusterConnection>;
  close?(): void;
}

export function apiClusterCredentials(options: {
  address: string;
  /** The sync service's identity towards the api: mutual TLS and its token. */
  identity: ServiceClient;
}): ClusterCredentialsSource {
  const client = new apiv1.ClusterCredentialsClient(options.address, options.identity.credentials);
  return {
    async get(cluster) {
      const res = await fromPeer('api', () =>
        unary(
          client.get.bind(client),
          { server: cluster.server, name: '' },
          { metadata: options.identity.metadata(), timeoutMs: 10_000 },
        ),
      );
      const c = res.config;
      const tls = c?.tlsClientConfig;
      return {
        name: res.name || cluster.name,
        server: res.server || cluster.server,
        ...(c?.bearerToken ? { bearerToken: c.bearerToken } : {}),
        ...(c?.username ? { username: c.username, password: c.password } : {}),
        ...(tls?.caData ? { caData: tls.caData } : {}),
        ...(tls?.certData ? { certData: tls.certData } : {}),
        ...(tls?.keyData ? { keyData: tls.keyData } : {}),
        ...(tls?.serverName ? { serverName: tls.serverName } : {}),
        insecure: tls?.insecure === true,
      };
    },
    close: () => client.close(),
  };
}
