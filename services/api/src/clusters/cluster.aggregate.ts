// The target-cluster aggregate: pure decide/evolve over what may travel on the bus (never a
// credential: those are sealed in api.cluster_credentials by the same transaction).
import { AlreadyExistsError, NotFoundError } from '@capstan/service';
import { sameManifest } from '../support/canonical.js';
import { VersionMismatchError } from '../support/errors.js';
import { clusterRegistered, clusterUpdated, clusterRemoved } from '@capstan/events';

export const CLUSTER_REGISTERED = clusterRegistered.type;
export const CLUSTER_UPDATED = clusterUpdated.type;
export const CLUSTER_REMOVED = clusterRemoved.type;

export interface ClusterInfo {
  name: string;
  server: string;
  project?: string;
  namespaces: string[];
  labels: Record<string, string>;
  credentialType: 'bearer' | 'basic' | 'tls' | 'none';
  keyId: string;
  insecure: boolean;
  serverName: string;
  hasCaData: boolean;
}

export type ClusterEvent =
  | { type: typeof CLUSTER_REGISTERED; data: { cluster: ClusterInfo; uid: string } }
  | { type: typeof CLUSTER_UPDATED; data: { cluster: ClusterInfo; credentialsChanged: boolean } }
  | { type: typeof CLUSTER_REMOVED; data: { name: string; server: string } };

export interface ClusterState {
  cluster: ClusterInfo | undefined;
  uid: string | undefined;
}

export const initialClusterState = (): ClusterState => ({ cluster: undefined, uid: undefined });

export type ClusterCommand =
  | { type: 'register'; cluster: ClusterInfo; upsert: boolean; uid: string; credentialsChanged: boolean }
  | { type: 'update'; cluster: ClusterInfo; expectedVersion: number; credentialsChanged: boolean }
  | { type: 'remove'; server: string };

export function decideCluster(command: ClusterCommand, state: ClusterState, version: number): ClusterEvent[] {
  switch (command.type) {
    case 'register': {
      if (!state.cluster)
        return [{ type: CLUSTER_REGISTERED, data: { cluster: command.cluster, uid: command.uid } }];
      if (!command.upsert)
        throw new AlreadyExistsError(
          `cluster ${command.cluster.server} is already registered (use upsert to update it)`,
        );
      if (!command.credentialsChanged && sameManifest(state.cluster, command.cluster)) return [];
      return [
        {
          type: CLUSTER_UPDATED,
          data: { cluster: command.cluster, credentialsChanged: command.credentialsChanged },
        },
      ];
    }
    case 'update': {
      if (!state.cluster) throw new NotFoundError(`cluster ${command.cluster.server} not found`);
      if (command.expectedVersion !== 0 && command.expectedVersion !== version) {
        throw new VersionMismatchError('cluster', command.cluster.server, version, command.expectedVersion);
      }
      if (!command.credentialsChanged && sameManifest(state.cluster, command.cluster)) return [];
      return [
        {
          type: CLUSTER_UPDATED,
          data: { cluster: command.cluster, credentialsChanged: command.credentialsChanged },
        },
      ];
    }
    case 'remove': {
      if (!state.cluster) throw new NotFoundError(`cluster ${command.server} not found`);
      return [{ type: CLUSTER_REMOVED, data: { name: state.cluster.name, server: command.server } }];
    }
  }
}

export function evolveCluster(state: ClusterState, event: ClusterEvent): ClusterState {
  switch (event.type) {
    case CLUSTER_REGISTERED:
      return { cluster: event.data.cluster, uid: event.data.uid };
    case CLUSTER_UPDATED:
      return { ...state, cluster: event.data.cluster };
    case CLUSTER_REMOVED:
      return initialClusterState();
    default:
      return state;
  }
}
