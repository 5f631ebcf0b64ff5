// Wires the appset service: the backbone (schema appset, event store, outbox relay), the engine
// (Go template module loaded once), the peers (api, repo) over mutual TLS with this service's
// identity, the AppSetService gRPC server (mutual TLS, only the api, always for a user), the
// reconciler and its trigger consumers.
import { Server } from '@grpc/grpc-js';
import type { Kysely } from 'kysely';
import { postgresDeadLetters, startBackbone, type Bus } from '@capstan/events';
import { appsetv1 } from '@capstan/proto';
import {
  commonSettings,
  effectiveSettings,
  type CommonConfig,
  type ConfigOf,
  type ServiceContext,
} from '@capstan/service';
import {
  internalServerAuthenticator,
  requireTls,
  listenInternal,
  ServiceClient,
} from '@capstan/service-identity';
import { appsetSettings } from './settings.js';
import { followAppsetSettings } from './settings/applied-settings.js';
import { appsetMigrations, APPSET_SCHEMA } from './migrations/index.js';
import type { AppSetDatabase } from './sets/appset.table.js';
import { grpcApiPeer, type ApiPeer } from './peers/api-peer.js';
import { grpcRepoPeer, type RepoPeer } from './peers/repo-git.js';
import { AppSetFlows } from './flows/appset-flows.js';
import { EnginePool } from './flows/engine-pool.js';
import { appSetServiceImplementation } from './rpc/appset-rpc.js';
import { Reconciler } from './reconcile/reconciler.js';
import { AppSetMetrics } from './observability/appset-metrics.js';
import { startTriggerConsumers } from './reconcile/triggers.js';

export type AppSetConfig = ConfigOf<typeof appsetSettings> & CommonConfig;

/** Peers a test may pass instead of the gRPC ones (the real api is not part of this package's tests). */
export interface AppSetPorts {
  api?: ApiPeer;
  repo?: RepoPeer;
}

export interface AppSetHandles {
  grpcPort: number;
  db: Kysely<AppSetDatabase>;
  bus: Bus;
  flows: AppSetFlows;
  reconciler: Reconciler;
  engine: EnginePool;
}

export async function startAppset(
  ctx: ServiceContext<AppSetConfig>,
  ports: AppSetPorts = {},
): Promise<AppSetHandles> {
  const config = ctx.config;
  const tls = requireTls(config, 'appset');
  // Every method acts for a user: without the api's key no call could ever be accepted.
  const auth = internalServerAuthenticator(config, 'appset', { requireDelegations: true });
  const backbone = await startBackbone<AppSetDatabase>(ctx, {
    schema: APPSET_SCHEMA,
    migrations: appsetMigrations,
  });
  // The backbone's handle also types the event store tables (AppSetDatabase includes them).
  const db = backbone.db as unknown as Kysely<AppSetDatabase>;
  const bus = backbone.bus;
  const live = await followAppsetSettings(ctx, db, bus);
  const engine = await EnginePool.load(config['generation.workers']);
  ctx.onShutdown('appset engines', () => engine.close());
  const api =
    ports.api ??
    grpcApiPeer(config['api.address'], new ServiceClient({ token: config['api.service-token'], tls }));
  const repo =
    ports.repo ??
    grpcRepoPeer(config['repo.address'], new ServiceClient({ token: config['repo.service-token'], tls }));
  ctx.onShutdown('peers', () => {
    api.close();
    repo.close();
  });
  const limits = {
    maxApplications: config['generation.max-applications'],
    maxOutputBytes: config['generation.max-output-bytes'],
    maxTotalOutputBytes: config['generation.max-total-bytes'],
    timeoutMs: config['generation.timeout-ms'],
  };
  const flows = new AppSetFlows({
    db,
    engine,
    api,
    repo,
    limits,
    requeueSeconds: config['reconcile.requeue-seconds'],
  });
  const reconciler = new Reconciler(
    {
      db,
      engine,
      api,
      repo,
      limits,
      logger: ctx.logger,
      metrics: new AppSetMetrics(ctx.metrics, db, ctx.logger),
    },
    { tickMs: config['reconcile.tick-ms'], parallelism: config['reconcile.parallelism'] },
  );

  const server = new Server();
  server.addService(
    appsetv1.AppSetServiceService,
    appSetServiceImplementation({
      auth,
      flows,
      logger: ctx.logger,
      effectiveSettings: (showSource) =>
        effectiveSettings(
          'appset',
          { ...commonSettings, ...appsetSettings },
          {
            value: (k) => live.get(k as keyof AppSetConfig & string),
            source: (k) => live.sourceOf(k),
          },
          showSource,
        ),
    }),
  );
  const grpc = await listenInternal(server, `${config['grpc.host']}:${config['grpc.port']}`, tls);
  ctx.onShutdown('grpc server', grpc.stop);
  const grpcPort = grpc.port;
  ctx.logger.info({ grpcPort }, 'appset gRPC listening');

  const consumers = await startTriggerConsumers(db, bus, {
    onDue: () => reconciler.kick(),
    deadLetters: postgresDeadLetters(db as never, APPSET_SCHEMA),
  });
  ctx.onShutdown('trigger consumers', () =>
    Promise.all(consumers.map((c) => c.stop())).then(() => undefined),
  );
  reconciler.start();
  ctx.onShutdown('reconciler', () => reconciler.stop());
  return { grpcPort, db, bus, flows, reconciler, engine };
}
