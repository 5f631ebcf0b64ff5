// Wires the sync service: backbone (database, bus, outbox relay), the read model of the api's
// events, the request intake and the worker pool. main.ts passes the production ports; tests pass
// the credentials of the real API servers they start.
import type { Kysely } from 'kysely';
import {
  postgresDeadLetters,
  readAppliedSettings,
  startAppliedSettingsConsumer,
  startBackbone,
  type EventStoreDatabase,
} from '@capstan/events';
import {
  commonSettings,
  effectiveSettings,
  followLogLevel,
  LiveSettings,
  logLiveChange,
  type CommonConfig,
  type ConfigOf,
  type ServiceContext,
} from '@capstan/service';
import { syncSettings } from './settings.js';
import { SETTINGS_CONSUMER } from './settings/applied-settings.js';
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
import { SyncMetrics } from './observability/sync-metrics.js';

export type SyncConfig = ConfigOf<typeof syncSettings> & CommonConfig;

export interface SyncPorts {
  credentials?: ClusterCredentialsSource;
  manifests?: ManifestSource;
  delivery?: DeliveredObjects;
  /** Health of live objects (default: built-in rules plus the checks of resource.customizations-file). */
  health?: HealthAssessor;
}

type SyncDb = Kysely<SyncDatabase & EventStoreDatabase>;

export async function startSync(
  ctx: ServiceContext<SyncConfig>,
  ports: SyncPorts = {},
): Promise<{
  db: SyncDb;
  grpcPort: number | undefined;
  reconciler?: RunningReconciler;
}> {
  // Custom health checks compile before anything starts: a bad file fails the start, naming file and key.
  const initialHealth =
    ports.health ??
    (await loadHealthAssessor(
      ctx.config['resource.customizations-file'],
      ctx.config['resource.customizations'],
    ));
  const { db, bus } = await startBackbone<SyncDatabase>(ctx, { schema: 'sync', migrations: syncMigrations });
  const config = ctx.config;
  const settings = await liveSyncSettings(ctx, db, initialHealth, ports.health !== undefined);
  const { credentials, manifests, delivery } = connectPeers(ctx, ports);
  const deadLetters = postgresDeadLetters(db, 'sync');
  // The reconciler is told of finished syncs and read-model changes; it starts after the workers.
  let reconciler: RunningReconciler | undefined;
  const clusters = new TargetClusterPool(config['sync.request-timeout-ms']);
  const metrics = new SyncMetrics(ctx.metrics, db, ctx.logger);
  const workers = startWorkers(
    {
      db,
      credentials,
      manifests,
      delivery,
      health: settings.health,
      settings: withLiveGetters(
        {
          hookTimeoutMs: config['sync.hook-timeout-ms'],
          waveTimeoutMs: config['sync.wave-timeout-ms'],
          maxAttempts: config['sync.max-attempts'],
        },
        settings.decision,
      ),
      logger: ctx.logger,
      clusters,
      audit: new AuditWriter(db as unknown as Kysely<unknown>),
      metrics,
    },
    {
      parallelism: settings.live.get('sync.parallelism'),
      leaseMs: config['sync.lease-ms'],
      onFinished: (app) => reconciler?.syncFinished(app),
    },
  );
  ctx.onShutdown('sync workers', () => workers.stop());
  // The internal gRPC server (ManagedResources for `capstan app diff`), when callers are configured.
  const grpcPort = await startSyncGrpcServer(
    ctx,
    { db, credentials, manifests, clusters, health: settings.health },
    settings.decision,
    (showSource) =>
      effectiveSettings(
        'sync',
        { ...commonSettings, ...syncSettings },
        { value: (k) => settings.live.get(k as never), source: (k) => settings.live.sourceOf(k) },
        showSource,
      ),
  );
  const readModel = await startReadModelConsumer(db, bus, {
    deadLetters,
    onApplied: (event) => reconciler?.readModelApplied(event),
  });
  ctx.onShutdown('read model consumer', () => readModel.stop());
  const intake = await startIntake(db, bus, workers, { deadLetters });
  ctx.onShutdown('sync request consumer', () => intake.stop());
  const settingsConsumer = await startAppliedSettingsConsumer(bus, db, {
    schema: 'sync',
    durable: SETTINGS_CONSUMER,
    deadLetters,
    onApplied: async (objects) => void settings.live.apply(objects),
  });
  ctx.onShutdown('settings consumer', () => settingsConsumer.stop());
  if (config['reconcile.enabled']) {
    reconciler = await startReconciler(
      {
        db,
        bus,
        deadLetters,
        logger: ctx.logger.child({ component: 'reconciler' }),
        health: settings.health,
        manifests,
        credentials,
        // Its own clients: a slow cluster's timeouts in the reconciler do not reset a sync's connections.
        clusters: new TargetClusterPool(config['sync.request-timeout-ms']),
        settings: settings.decision,
        wake: (count) => workers.wake(count),
        metrics,
      },
      reconcileOptions(config, settings.live),
    );
    ctx.onShutdown('reconciler', () => reconciler!.stop());
    // Which kinds are compared is part of every Application's desired state: re-read them all.
    settings.live.onChange((change) => {
      if (change.changed.some((k) => k === 'resource.exclusions' || k === 'resource.inclusions'))
        reconciler?.reconciler.resyncAll();
    });
  }
  return { db, grpcPort, ...(reconciler ? { reconciler } : {}) };
}

/** `extra` with `live`'s getters added as getters (never copied: an applied change counts at once). */
function withLiveGetters<E extends object, L extends object>(extra: E, live: L): E & L {
  return Object.defineProperties(extra, Object.getOwnPropertyDescriptors(live)) as E & L;
}

/**
 * The settings in force: start-up configuration with the Argo CD objects applied through the api on
 * top, followed live. Health checks and system-level ignoreDifferences are recompiled when an applied
 * argocd-cm changes resource.customizations (a refused change keeps the previous ones).
 */
async function liveSyncSettings(
  ctx: ServiceContext<SyncConfig>,
  db: SyncDb,
  initialHealth: HealthAssessor,
  healthFixed: boolean,
) {
  const config = ctx.config;
  const live = new LiveSettings({ ...commonSettings, ...syncSettings }, config, ctx.configReport, 'sync');
  logLiveChange(ctx.logger, live.apply(await readAppliedSettings(db, 'sync')), live);
  followLogLevel(ctx.logger, live);
  let currentHealth = initialHealth;
  // Workers and the reconciler read it per object.
  const health: HealthAssessor = { assess: (obj) => currentHealth.assess(obj) };
  // argocd-cm's system-level ignoreDifferences: a bad entry fails the start.
  let systemIgnore = systemIgnoreDifferencesFromArgoCdCm(live.get('resource.customizations'));
  live.onChange((change) => {
    logLiveChange(ctx.logger, change, live);
    if (!change.changed.includes('resource.customizations')) return;
    if (!healthFixed)
      void loadHealthAssessor(
        config['resource.customizations-file'],
        live.get('resource.customizations'),
      ).then(
        (h) => (currentHealth = h),
        (err: unknown) =>
          ctx.logger.error({ err }, 'applied resource.customizations refused; previous checks kept'),
      );
    try {
      systemIgnore = systemIgnoreDifferencesFromArgoCdCm(live.get('resource.customizations'));
    } catch (err) {
      ctx.logger.error({ err }, 'applied ignoreDifferences refused; previous entries kept');
    }
  });
  logImpersonation(ctx, live);
  // Read at every decision (getters, never copied): an applied change counts from the next sync.
  const decision = {
    get impersonation() {
      return live.get('application.sync.impersonation.enabled');
    },
    get systemIgnoreDifferences() {
      return systemIgnore;
    },
    get resourceFilter() {
      return { exclusions: live.get('resource.exclusions'), inclusions: live.get('resource.inclusions') };
    },
    strict: config['sync.strict-service-accounts'],
    controlNamespace: config['sync.control-namespace'],
  };
  return { live, health, decision };
}

function logImpersonation(ctx: ServiceContext<SyncConfig>, live: LiveSettings<SyncConfig>) {
  const impersonation = live.get('application.sync.impersonation.enabled');
  ctx.logger.info(
    {
      impersonation,
      source: live.sourceOf('application.sync.impersonation.enabled')?.detail,
      strict: ctx.config['sync.strict-service-accounts'],
      parallelism: live.get('sync.parallelism'),
    },
    impersonation
      ? 'syncs run as the ServiceAccounts of destinationServiceAccounts'
      : "impersonation is off: syncs use the clusters' control-plane credentials",
  );
}

/** The api (cluster credentials, delivered objects) and repo (manifests), unless a test gives its own. */
function connectPeers(ctx: ServiceContext<SyncConfig>, ports: SyncPorts) {
  const config = ctx.config;
  // Every internal call goes over mutual TLS with the sync service's own certificate (tls.* settings).
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
  return { credentials, manifests, delivery };
}

function reconcileOptions(config: SyncConfig, live: LiveSettings<SyncConfig>) {
  return {
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
  };
}
