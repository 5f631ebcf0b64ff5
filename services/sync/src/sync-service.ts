// Wires the sync service: backbone (database, bus, outbox relay), the read model of the api's
// events, the request intake and the worker pool. main.ts passes the production ports; tests pass
// the credentials of the real API servers they start.
import type { Kysely } from 'kysely';
import { postgresDeadLetters, startBackbone, type EventStoreDatabase } from '@capstan/events';
import type { CommonConfig, ConfigOf, ServiceContext } from '@capstan/service';
import type { syncSettings } from './settings.js';
import type { SyncDatabase } from './sync.table.js';
import { syncMigrations } from './migrations/index.js';
import { startReadModelConsumer } from './read-model/read-model.consumer.js';
import { startIntake, startWorkers } from './operations/sync-worker.js';
import { requireTls, ServiceClient } from '@capstan/service-identity';
import { apiClusterCredentials, type ClusterCredentialsSource } from './kube/cluster-credentials.js';
import type { ManifestSource } from './manifests/manifest-source.js';
import { repoManifests } from './manifests/repo-manifests.js';
import { TargetClusterPool } from './kube/target-cluster-pool.js';
import { AuditWriter } from './decision/audit-writer.js';
import { apiDeliveredObjects, type DeliveredObjects } from './delivery/api-delivery.js';
import type { HealthAssessor } from '@capstan/health';
import { loadHealthAssessor } from './health-customizations.js';
import { startSyncGrpcServer } from './diff/sync-grpc-server.js';
import { startReconciler, type RunningReconciler } from './reconcile/start.js';

export type SyncConfig = ConfigOf<typeof syncSettings> & CommonConfig;

export interface SyncPorts {
  credentials?: ClusterCredentialsSource;
  manifests?: ManifestSource;
  delivery?: DeliveredObjects;
  /** Health of live objects (default: built-in rules plus the checks of resource.customizations-file). */
  health?: HealthAssessor;
}

export async function startSync(
  ctx: ServiceContext<SyncConfig>,
  ports: SyncPorts = {},
): Promise<{
  db: Kysely<SyncDatabase & EventStoreDatabase>;
  grpcPort: number | undefined;
  reconciler?: RunningReconciler;
}> {
  // Custom health checks compile before anything starts: a bad file fails the start, naming file and key.
  const health = ports.health ?? (await loadHealthAssessor(ctx.config['resource.customizations-file']));
  const { db, bus } = await startBackbone<SyncDatabase>(ctx, { schema: 'sync', migrations: syncMigrations });
  const config = ctx.config;
  const impersonation = config['application.sync.impersonation.enabled'];
  ctx.logger.info(
    {
      impersonation,
      strict: config['sync.strict-service-accounts'],
      parallelism: config['sync.parallelism'],
    },
    impersonation
      ? 'syncs run as the ServiceAccounts of destinationServiceAccounts'
      : "impersonation is off: syncs use the clusters' control-plane credentials",
  );
  // Both internal calls go over mutual TLS with the sync service's own certificate (tls.* settings).
  const tls = ports.credentials && ports.manifests && ports.delivery ? undefined : requireTls(config, 'sync');
  const credentials =
    ports.credentials ??
    apiClusterCredentials({
      address: config['api.address'],
      identity: new ServiceClient({ token: config['api.service-token'], tls: tls! }),
    });
  ctx.onShutdown('cluster credentials client', () => credentials.close?.());
  let manifests = ports.manifests;
  if (!manifests) {
    const repo = repoManifests({
      address: config['repo.address'],
      identity: new ServiceClient({ token: config['repo.service-token'], tls: tls! }),
    });
    ctx.onShutdown('repo client', () => repo.close());
    manifests = repo;
  }
  const delivery =
    ports.delivery ??
    apiDeliveredObjects({
      address: config['api.address'],
      identity: new ServiceClient({ token: config['api.service-token'], tls: tls! }),
    });
  ctx.onShutdown('delivered objects client', () => delivery.close?.());
  const deadLetters = postgresDeadLetters(db, 'sync');
  // The reconciler is told of finished syncs and read-model changes; it starts after the workers.
  let reconciler: RunningReconciler | undefined;
  const decisionSettings = {
    impersonation,
    strict: config['sync.strict-service-accounts'],
    controlNamespace: config['sync.control-namespace'],
  };

  const clusters = new TargetClusterPool(config['sync.request-timeout-ms']);
  const workers = startWorkers(
    {
      db,
      credentials,
      manifests,
      delivery,
      health,
      settings: {
        ...decisionSettings,
        hookTimeoutMs: config['sync.hook-timeout-ms'],
        waveTimeoutMs: config['sync.wave-timeout-ms'],
        maxAttempts: config['sync.max-attempts'],
      },
      logger: ctx.logger,
      clusters,
      audit: new AuditWriter(db as unknown as Kysely<unknown>),
    },
    {
      parallelism: config['sync.parallelism'],
      leaseMs: config['sync.lease-ms'],
      onFinished: (app) => reconciler?.syncFinished(app),
    },
  );
  ctx.onShutdown('sync workers', () => workers.stop());
  // The internal gRPC server (ManagedResources for `capstan app diff`), when callers are configured.
  const grpcPort = await startSyncGrpcServer(ctx, { db, credentials, manifests, clusters });
  const readModel = await startReadModelConsumer(db, bus, {
    deadLetters,
    onApplied: (event) => reconciler?.readModelApplied(event),
  });
  ctx.onShutdown('read model consumer', () => readModel.stop());
  const intake = await startIntake(db, bus, workers, { deadLetters });
  ctx.onShutdown('sync request consumer', () => intake.stop());
  if (config['reconcile.enabled']) {
    reconciler = await startReconciler(
      {
        db,
        bus,
        deadLetters,
        logger: ctx.logger.child({ component: 'reconciler' }),
        health,
        manifests,
        credentials,
        // Its own clients: a slow cluster's timeouts in the reconciler do not reset a sync's connections.
        clusters: new TargetClusterPool(config['sync.request-timeout-ms']),
        settings: decisionSettings,
        wake: (count) => workers.wake(count),
      },
      {
        resyncMs: config['reconcile.resync-ms'],
        requestTimeoutMs: config['sync.request-timeout-ms'],
        selfHeal: {
          backoffMs: config['reconcile.self-heal-backoff-ms'],
          factor: config['reconcile.self-heal-backoff-factor'],
          capMs: config['reconcile.self-heal-backoff-cap-ms'],
          timeoutMs: config['reconcile.self-heal-timeout-ms'],
        },
      },
    );
    ctx.onShutdown('reconciler', () => reconciler!.stop());
  }
  return { db, grpcPort, ...(reconciler ? { reconciler } : {}) };
}
