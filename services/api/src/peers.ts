// The api's clients of the other services (repo, appset, sync): each over mutual TLS with the api's
// service token, or, when its address is not configured, a backend that answers UNAVAILABLE.
import { FailedPreconditionError } from '@capstan/service';
import { ServiceClient, type TlsMaterial } from '@capstan/service-identity';
import type { Delegations } from './auth/delegations.js';
import type { ApiConfig } from './api-service.js';
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

/** host:port of each peer and the api's token for it; an empty address: its calls answer UNAVAILABLE. */
export type PeerSettings = Pick<
  ApiConfig,
  | 'repo.address'
  | 'repo.service-token'
  | 'appset.address'
  | 'appset.service-token'
  | 'sync.address'
  | 'sync.service-token'
>;

export interface PeerBackends {
  repo: RepoBackend;
  appset: AppSetBackend;
  sync: SyncBackend;
}

type Defer = (name: string, stop: () => Promise<void> | void) => void;

export function connectPeers(
  config: PeerSettings,
  tls: TlsMaterial | undefined,
  delegations: Delegations,
  defer: Defer,
): PeerBackends {
  /** The client of one configured peer (closed at stop), or undefined when it has no address. */
  const peer = <T extends { close(): void }>(
    setting: string,
    address: string,
    token: string,
    create: (address: string, client: ServiceClient) => T,
  ): T | undefined => {
    if (!address) return undefined;
    if (!tls)
      throw new FailedPreconditionError(
        `${setting} needs mutual TLS: set tls.ca-file, tls.cert-file and tls.key-file`,
      );
    const backend = create(address, new ServiceClient({ token, tls }));
    defer(`${setting.split('.')[0]} client`, () => backend.close());
    return backend;
  };
  return {
    repo:
      peer(
        'repo.address',
        config['repo.address'],
        config['repo.service-token'],
        (a, c) => new GrpcRepoBackend(a, c, delegations),
      ) ?? new UnconfiguredRepoBackend(),
    appset:
      peer(
        'appset.address',
        config['appset.address'],
        config['appset.service-token'],
        (a, c) => new GrpcAppSetBackend(a, c, delegations),
      ) ?? new UnconfiguredAppSetBackend(),
    sync:
      peer(
        'sync.address',
        config['sync.address'],
        config['sync.service-token'],
        (a, c) => new GrpcSyncBackend(a, c),
      ) ?? new UnconfiguredSyncBackend(),
  };
}
