// Wires the sync service: backbone (database, bus, outbox relay), the read model of the api's
// events, the request intake and the worker pool. main.ts passes the production ports; tests pass
// the credentials of the real API servers they start.
import type { Kysely } from 'kysely';
import { postgresDeadLetters, startBackbone, type EventStoreDatabase } from '@capstan/events';
import {
  commonSettings,
  LiveSettings,
  type CommonConfig,
  type ConfigOf,
  type ServiceContext,
} from '@capstan/service';
import { syncSettings } from './settings.js';
import { logLiveChange, readAppliedSettings, startSettingsConsumer } from './settings/applied-settings.js';
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
import { systemIgnoreDifferencesFromArgoCdCm } from '@capstan/diff';
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
  const file = ctx.config['resource.customizations-file'];
  let currentHealth = ports.health ?? (await loadHealthAssessor(file, ctx.config['resource.customizations']));
  // Swapped when an applied argocd-cm changes resource.customizations: workers read it per object.
  const health: HealthAssessor = { assess: (obj) => currentHealth.assess(obj) };
  const { db, bus } = await startBackbone<SyncDatabase>(ctx, { schema: 'sync', migrations: syncMigrations });
  const config = ctx.config;
  // The settings in force: start-up configuration with Argo CD objects applied through the api on top.
  const live = new LiveSettings({ ...commonSettings, ...syncSettings }, config, ctx.configReport, 'sync');
  logLiveChange(ctx.logger, live.apply(await readAppliedSettings(db)), live);
  live.onChange((change) => {
    logLiveChange(ctx.logger, change, live);
    if (!ports.health && change.changed.includes('resource.customizations'))
      void loadHealthAssessor(file, live.get('resource.customizations')).then(
        (h) => (currentHealth = h),
        (err: unknown) =>
          ctx.logger.error({ err }, 'applied resource.customizations refused; previous checks kept'),
      );
  });
  // argocd-cm's system-level ignoreDifferences: a bad entry fails the start; applied later, it is
  // refused with a log line and the previous entries stay.
  let systemIgnore = systemIgnoreDifferencesFromArgoCdCm(live.get('resource.customizations'));
  live.onChange((change) => {
    if (!change.changed.includes('resource.customizations')) return;
    try {
      systemIgnore = systemIgnoreDifferencesFromArgoCdCm(live.get('resource.customizations'));
    } catch (err) {
      ctx.logger.error({ err }, 'applied ignoreDifferences refused; previous entries kept');
    }
  });
  const impersonation = live.get('application.sync.impersonation.enabled');
  ctx.logger.info(
    {
      impersonation,
      source: live.sourceOf('application.sync.impersonation.enabled')?.detail,
      strict: config['sync.strict-service-accounts'],
      parallelism: live.get('sync.parallelism'),
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
  // Read at every decision (getters, never copied): an applied change counts from the next sync.
  const decisionSettings = {
    get impersonation() {
      return live.get('application.sync.impersonation.enabled');
    },
    get systemIgnoreDifferences() {
      return systemIgnore;
    },
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
        get impersonation() {
          return live.get('application.sync.impersonation.enabled');
        },
        get systemIgnoreDifferences() {
          return systemIgnore;
        },
        strict: config['sync.strict-service-accounts'],
        controlNamespace: config['sync.control-namespace'],
        hookTimeoutMs: config['sync.hook-timeout-ms'],
        waveTimeoutMs: config['sync.wave-timeout-ms'],
        maxAttempts: config['sync.max-attempts'],
      },
      logger: ctx.logger,
      clusters,
      audit: new AuditWriter(db as unknown as Kysely<unknown>),
    },
    {
      parallelism: live.get('sync.parallelism'),
      leaseMs: config['sync.lease-ms'],
      onFinished: (app) => reconciler?.syncFinished(app),
    },
  );
  ctx.onShutdown('sync workers', () => workers.stop());
  // The internal gRPC server (ManagedResources for `capstan app diff`), when callers are configured.
  const grpcPort = await startSyncGrpcServer(ctx, { db, credentials, manifests, clusters }, decisionSettings);
  const readModel = await startReadModelConsumer(db, bus, {
    deadLetters,
    onApplied: (event) => reconciler?.readModelApplied(event),
  });
  ctx.onShutdown('read model consumer', () => readModel.stop());
  const intake = await startIntake(db, bus, workers, { deadLetters });
  ctx.onShutdown('sync request consumer', () => intake.stop());
  const settingsConsumer = await startSettingsConsumer(db, bus, {
    deadLetters,
    onApplied: async (objects) => void live.apply(objects),
  });
  ctx.onShutdown('settings consumer', () => settingsConsumer.stop());
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
        // argocd-cm timeout.reconciliation, live: each Application's next resync is scheduled with it.
        get resyncMs() {
          return live.get('reconcile.resync-ms');
        },
        requestTimeoutMs: config['sync.request-timeout-ms'],
        selfHeal: {
          backoffMs: live.get('reconcile.self-heal-backoff-ms'),
          factor: live.get('reconcile.self-heal-backoff-factor'),
          capMs: live.get('reconcile.self-heal-backoff-cap-ms'),
          timeoutMs: live.get('reconcile.self-heal-timeout-ms'),
        },
      },
    );
    ctx.onShutdown('reconciler', () => reconciler!.stop());
  }
  return { db, grpcPort, ...(reconciler ? { reconciler } : {}) };
}
