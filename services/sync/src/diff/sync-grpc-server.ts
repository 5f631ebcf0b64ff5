// The sync service's internal gRPC server (mutual TLS; only the api): SyncService.ManagedResources.
// Off, with a warning, while auth.service-tokens is empty (no caller could be accepted anyway).
import { Server } from '@grpc/grpc-js';
import { syncv1 } from '@capstan/proto';
import type { EffectiveSetting, ServiceContext } from '@capstan/service';
import { internalServerAuthenticator, requireTls, listenInternal } from '@capstan/service-identity';
import type { SyncConfig } from '../sync-service.js';
import type { HealthAssessor } from '@capstan/health';
import type { ManagedResourcesDeps } from './managed-resources.js';
import { syncServiceImplementation } from './sync-rpc.js';

export async function startSyncGrpcServer(
  ctx: ServiceContext<SyncConfig>,
  deps: Omit<ManagedResourcesDeps, 'settings' | 'logger'> & { health: HealthAssessor },
  /** The decision settings in force (live: read at every call). */
  settings: ManagedResourcesDeps['settings'],
  effectiveSettings: (showSource: boolean) => EffectiveSetting[],
): Promise<number | undefined> {
  const config = ctx.config;
  if (!config['auth.service-tokens']) {
    ctx.logger.warn(
      'auth.service-tokens is empty: the internal gRPC server is off (capstan app diff is unavailable)',
    );
    return undefined;
  }
  const tls = requireTls(config, 'sync');
  const server = new Server();
  server.addService(
    syncv1.SyncServiceService,
    syncServiceImplementation({
      ...deps,
      auth: internalServerAuthenticator(config, 'sync'),
      logger: ctx.logger,
      settings,
      effectiveSettings,
    }),
  );
  const grpc = await listenInternal(server, `${config['grpc.host']}:${config['grpc.port']}`, tls);
  ctx.onShutdown('grpc server', grpc.stop);
  ctx.logger.info({ grpcPort: grpc.port }, 'sync gRPC listening');
  return grpc.port;
}
