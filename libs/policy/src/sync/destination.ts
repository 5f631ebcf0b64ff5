// Where an Application syncs to: its destination resolved against the known clusters. Argo CD
// lets an Application name its cluster by `server` or by `name` (never both); the
// ServiceAccount rules always see the server URL of the resolved cluster.
import type { Application, ClusterRef } from '../manifests/schemas.js';

/** Argo CD's built-in cluster: the control plane's own. */
export const IN_CLUSTER: ClusterRef = { name: 'in-cluster', server: 'https://kubernetes.default.svc' };

export interface ResolvedDestination {
  readonly server: string;
  /** The cluster's name when the cluster is known. */
  readonly name: string | undefined;
  /** As written: '' when the Application has none. */
  readonly namespace: string;
  readonly registered: boolean;
  /** The project a project-scoped cluster belongs to. */
  readonly project?: string | undefined;
}

export type DestinationResolution =
  | { readonly ok: true; readonly destination: ResolvedDestination }
  | { readonly ok: false; readonly reason: string };

export class ClusterDirectory {
  private readonly byName = new Map<string, ClusterRef>();
  private readonly byServer = new Map<string, ClusterRef>();

  constructor(clusters: Iterable<ClusterRef>, options: { inCluster?: boolean } = {}) {
    if (options.inCluster !== false) this.add(IN_CLUSTER);
    for (const c of clusters) this.add(c);
  }

  /** Later registrations win, so an explicit cluster replaces the built-in in-cluster entry. */
  add(cluster: ClusterRef): void {
    const previous = this.byServer.get(cluster.server);
    if (previous) this.byName.delete(previous.name);
    this.byName.set(cluster.name, cluster);
    this.byServer.set(cluster.server, cluster);
  }

  byClusterName(name: string): ClusterRef | undefined {
    return this.byName.get(name);
  }

  byServerUrl(server: string): ClusterRef | undefined {
    return this.byServer.get(server);
  }

  resolve(app: Application): DestinationResolution {
    const { server, name, namespace } = app.spec.destination;
    const ns = namespace ?? '';
    if (server && name) {
      return {
        ok: false,
        reason:
          'spec.destination: server and name are both set; an Application names its cluster by one of them',
      };
    }
    if (name) {
      const cluster = this.byName.get(name);
      if (!cluster)
        return {
          ok: false,
          reason: `spec.destination.name: cluster ${JSON.stringify(name)} is not registered`,
        };
      return {
        ok: true,
        destination: {
          server: cluster.server,
          name: cluster.name,
          namespace: ns,
          registered: true,
          project: cluster.project,
        },
      };
    }
    if (server) {
      const cluster = this.byServer.get(server);
      return {
        ok: true,
        destination: {
          server,
          name: cluster?.name,
          namespace: ns,
          registered: cluster !== undefined,
          project: cluster?.project,
        },
      };
    }
    return { ok: false, reason: 'spec.destination: server or name is required' };
  }
}
