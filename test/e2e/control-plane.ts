// The four services as their own processes, wired to each other as in production (mutual TLS, the
// api's delegations, each service's tokens): repo, then the api (which knows appset's address before
// appset starts), appset, and sync with impersonation on (the api knows its internal gRPC too, for
// ManagedResources). For the stories that need the whole control plane (appset-story,
// self-service-story, diff-story, reconcile-story); `stop` stops them in reverse order. The pieces
// (startRepoAndApi, syncProcessEnv, startSyncProcess) serve the stories that need fewer services or
// restart one (sync-story, canary, deletion-story, cross-tenant, api-story).
import { randomBytes } from 'node:crypto';
import type { TestBus } from '@capstan/test/infra';
import { startServiceProcess, type ServiceProcess } from '../src/infra/index.js';
import { startApiProcess, type ApiProcess } from './api-harness.js';
import {
  appsetTokens,
  reserveAppsetAddress,
  startAppsetProcess,
  type AppsetProcess,
} from './appset-harness.js';
import { startRepoProcess, type RepoProcess } from './repo-harness.js';

/** The repo service, then the api wired to it with the repo's token for the api. */
export async function startRepoAndApi(opts: {
  databaseUrl: string;
  bus: TestBus;
  cacheDir: string;
  repoEnv?: Record<string, string>;
  /** The api's extra options (appset wiring, environment). */
  api?: Pick<Parameters<typeof startApiProcess>[0], 'appset' | 'env'>;
}): Promise<{ repo: RepoProcess; api: ApiProcess }> {
  const repo = await startRepoProcess({
    databaseUrl: opts.databaseUrl,
    bus: opts.bus,
    cacheDir: opts.cacheDir,
    ...(opts.repoEnv ? { env: opts.repoEnv } : {}),
  });
  const api = await startApiProcess({
    databaseUrl: opts.databaseUrl,
    bus: opts.bus,
    ...(opts.api?.appset ? { appset: opts.api.appset } : {}),
    env: {
      CAPSTAN_REPO_ADDRESS: repo.grpcAddress,
      CAPSTAN_REPO_SERVICE_TOKEN: repo.serviceToken('api'),
      ...opts.api?.env,
    },
  });
  return { repo, api };
}

/** The sync service's environment: its database and bus user, the api and repo with its tokens and TLS. */
export function syncProcessEnv(
  databaseUrl: string,
  bus: TestBus,
  peers: { api: ApiProcess; repo: RepoProcess },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    ...bus.env('sync'),
    CAPSTAN_API_ADDRESS: peers.api.grpcAddress,
    CAPSTAN_API_SERVICE_TOKEN: peers.api.syncToken,
    CAPSTAN_REPO_ADDRESS: peers.repo.grpcAddress,
    CAPSTAN_REPO_SERVICE_TOKEN: peers.repo.serviceToken('sync'),
    ...peers.repo.pki.env('sync'),
    ...extra,
  };
}

/** The sync service as its own process, impersonation on unless `args` say otherwise. */
export function startSyncProcess(
  env: Record<string, string>,
  args: string[] = ['--enable-impersonation'],
): Promise<ServiceProcess> {
  return startServiceProcess('sync', env, args);
}

export interface ControlPlane {
  repo: RepoProcess;
  api: ApiProcess;
  appset: AppsetProcess;
  sync: ServiceProcess;
  /** The last lines of each service's output, for assertion messages. */
  output(): string;
  /** Stops the sync service and starts it again with `args` (same environment); throws when it fails to start. */
  restartSync(args: string[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startControlPlane(opts: {
  databaseUrl: string;
  bus: TestBus;
  cacheDir: string;
  /** Extra environment of the repo and appset processes (e.g. polling and reconcile intervals). */
  repoEnv?: Record<string, string>;
  appsetEnv?: Record<string, string>;
  /** The sync service's arguments (default: --enable-impersonation). */
  syncArgs?: string[];
  /** Extra environment of every service (e.g. where traces go). */
  env?: Record<string, string>;
}): Promise<ControlPlane> {
  const { databaseUrl, bus } = opts;
  const common = opts.env ?? {};
  const appsetAddress = await reserveAppsetAddress();
  const tokens = appsetTokens();
  // The sync service's internal gRPC (ManagedResources, `capstan app diff`): its address is known
  // before the api starts, and only the api's token is accepted there.
  const syncAddress = await reserveAppsetAddress();
  const apiToSync = randomBytes(24).toString('hex');
  const { repo, api } = await startRepoAndApi({
    databaseUrl,
    bus,
    cacheDir: opts.cacheDir,
    repoEnv: { ...common, ...opts.repoEnv },
    api: {
      appset: { address: appsetAddress, tokens },
      env: { ...common, CAPSTAN_SYNC_ADDRESS: syncAddress, CAPSTAN_SYNC_SERVICE_TOKEN: apiToSync },
    },
  });
  const appset = await startAppsetProcess({
    databaseUrl,
    bus,
    address: appsetAddress,
    tokens,
    apiAddress: api.grpcAddress,
    repoAddress: repo.grpcAddress,
    repoToken: repo.serviceToken('appset'),
    env: { ...common, ...opts.appsetEnv },
  });
  const syncEnv = syncProcessEnv(
    databaseUrl,
    bus,
    { api, repo },
    {
      ...common,
      CAPSTAN_GRPC_PORT: syncAddress.split(':').at(-1)!,
      CAPSTAN_AUTH_SERVICE_TOKENS: `api=${apiToSync}`,
    },
  );
  let sync = await startSyncProcess(syncEnv, opts.syncArgs);
  return {
    repo,
    api,
    appset,
    get sync() {
      return sync;
    },
    async restartSync(args) {
      await sync.stop();
      sync = await startSyncProcess(syncEnv, args);
    },
    output: () => [api, repo, appset, sync].map((s) => s.output().slice(-4000)).join('\n-----\n'),
    async stop() {
      // Every service is stopped even when one of them is stuck; the first failure is reported.
      const failures: unknown[] = [];
      for (const service of [sync, appset, api, repo])
        await service.stop().catch((e: unknown) => failures.push(e));
      if (failures.length > 0) throw failures[0];
    },
  };
}
