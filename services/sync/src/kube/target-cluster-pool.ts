// Clients to target clusters, kept between syncs: one per (cluster, identity, credentials), so
// discovery is cached instead of repeated for every sync. A rotated credential hashes differently
// and gets a new client; the key holds a digest, never the credential itself.
import { createHash } from 'node:crypto';
import { TargetCluster } from './target-cluster.js';
import { type ClusterConnection, type SyncIdentity } from './kube-config.js';

/**
 * What tells two cluster connections apart (server, credentials, TLS settings), as a digest: a
 * rotated credential gives a new client, and a key never holds the credential itself.
 */
export function connectionDigest(conn: ClusterConnection): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        conn.server,
        conn.bearerToken,
        conn.username,
        conn.password,
        conn.caData,
        conn.certData,
        conn.keyData,
        conn.insecure,
        conn.serverName,
      ]),
    )
    .digest('hex');
}

export class TargetClusterPool {
  private readonly clients = new Map<string, TargetCluster>();

  constructor(
    private readonly requestTimeoutMs?: number,
    private readonly limit = 256,
  ) {}

  get(conn: ClusterConnection, identity: SyncIdentity): TargetCluster {
    const key = `${identity.kind === 'service-account' ? identity.username : '<control-plane>'}\u0000${connectionDigest(conn)}`;
    let client = this.clients.get(key);
    if (client) {
      // Most recently used last, so the oldest is evicted first.
      this.clients.delete(key);
    } else {
      client = TargetCluster.connect(conn, identity, this.requestTimeoutMs);
      if (this.clients.size >= this.limit) this.clients.delete(this.clients.keys().next().value!);
    }
    this.clients.set(key, client);
    return client;
  }
}
