// The api's clients of the other services (repo, appset, sync): each over mutual TLS with the api's
// service token, or, when its address is not configured, a backend that answers UNAVAILABLE.
import { FailedPreconditionError } from '@capstan/service';
import { ServiceClient, type TlsMaterial } from '@capstan/service-identity';
import type { Delegations } from './auth/delegations.js';
import {
  GrpcSyncBackend,
  UnconfiguredSyncBackend,
  type SyncBackend,
} from './applications/managed-resources.js';
import { UnconfiguredRepoBackend, type RepoBackend } from './repositories/repositories.service.js';
import { GrpcRepoBackend } from './repositories/repo-client.js';
import {
  GrpcAppSetBackend,
  UnconfiguredAppSetBackend,
  type AppSetBackend,
} from './applicationsets/appset-client.js';

export interface PeerSettings {
  tls?: TlsMaterial | undefined;
  /** host:port of each peer; empty: its calls answer UNAVAILABLE. */
  repoAddress?: string;
  repoServiceToken?: string;
  appsetAddress?: string;
  appsetServiceToken?: string;
  syncAddress?: string;
  syncServiceToken?: string;
}

export interface PeerBackends {
  repo: RepoBackend;
  appset: AppSetBackend;
  sync: SyncBackend;
}

type Defer = (name: string, stop: () => Promise<void> | void) => void;

export function connectPeers(config: PeerSettings, delegations: Delegations, defer: Defer): PeerBackends {
  /** The client of one configured peer (closed at stop), or undefined when it has no address. */
  const peer = <T extends { close(): void }>(
    setting: string,
    address: string | undefined,
    token: string | undefined,
    create: (address: string, client: ServiceClient) => T,
  ): T | undefined => {
    if (!address) return undefined;
    if (!config.tls)
      throw new FailedPreconditionError(
        `${setting} needs mutual TLS: set tls.ca-file, tls.cert-file and tls.key-file`,
      );
    const backend = create(address, new ServiceClient({ token: token ?? '', tls: config.tls }));
    defer(`${setting.split('.')[0]} client`, () => backend.close());
    return backend;
  };
  return {
    repo:
      peer(
        'repo.address',
        config.repoAddress,
        config.repoServiceToken,
        (a, c) => new GrpcRepoBackend(a, c, delegations),
      ) ?? new UnconfiguredRepoBackend(),
    appset:
      peer(
        'appset.address',
        config.appsetAddress,
        config.appsetServiceToken,
        (a, c) => new GrpcAppSetBackend(a, c, delegations),
      ) ?? new UnconfiguredAppSetBackend(),
    sync:
      peer(
        'sync.address',
        config.syncAddress,
        config.syncServiceToken,
        (a, c) => new GrpcSyncBackend(a, c),
      ) ?? new UnconfiguredSyncBackend(),
  };
}
