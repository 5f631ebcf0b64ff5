// Wires the repo service: database and bus (through the shared backbone), credential store,
// checkouts, manifest generation, change detection, and the internal gRPC server.
import path from 'node:path';
import { Server } from '@grpc/grpc-js';
import { gitPush, startBackbone, type Bus } from '@capstan/events';
import { repov1 } from '@capstan/proto';
import { loadKeyring, resealAtStartup } from '@capstan/sealing';
import {
  commonSettings,
  effectiveSettings,
  FailedPreconditionError,
  type CommonConfig,
  type ConfigOf,
  type ServiceContext,
} from '@capstan/service';
import type { Kysely } from 'kysely';
import { CheckoutStore } from './checkouts/checkout-store.js';
import { egressPolicy } from './checkouts/egress.js';
import { ChangeDetector } from './changes/change-detector.js';
import { touchWatch } from './changes/watch.repository.js';
import { repoSettings } from './settings.js';
import { followAppliedSettings, liveRepoSettings } from './settings/applied-settings.js';
import { CredentialService } from './credentials/credential-service.js';
import { sealedCredentials } from './credentials/credential-seal.js';
import type { RepoDb } from './credentials/credential.repository.js';
import type { RepoDatabase } from './credentials/credential.table.js';
import { ManifestGenerator } from './manifests/manifest-generator.js';
import { ChartStore } from './charts/chart-store.js';
import { RepoListing } from './manifests/repo-listing.js';
import { kustomizeVersionsOf, locateTool } from './manifests/render-tools.js';
import { repoMigrations } from './migrations/index.js';
import { RepoMetrics } from './observability/repo-metrics.js';
import { repoServiceImplementation } from './rpc/repo-rpc.js';
import { internalServerAuthenticator, requireTls, listenInternal } from '@capstan/service-identity';

export type RepoConfig = ConfigOf<typeof repoSettings> & CommonConfig;

export interface RepoServiceHandles {
  grpcPort: number;
  db: Kysely<RepoDatabase>;
  bus: Bus;
  checkouts: CheckoutStore;
  changes: ChangeDetector;
}

export async function startRepo(ctx: ServiceContext<RepoConfig>): Promise<RepoServiceHandles> {
  const config = ctx.config;
  const auth = internalServerAuthenticator(config, 'repo');
  const tls = requireTls(config, 'repo');
  const keyring = await loadKeyring(
    { value: config['credentials.encryption-keys'], file: config['credentials.encryption-key-file'] },
    {
      value: 'credentials.encryption-keys',
      file: 'credentials.encryption-key-file',
      env: 'CAPSTAN_CREDENTIALS_ENCRYPTION_KEYS',
    },
  );
  const kustomize = await locateTool('kustomize', config['kustomize.path'] || undefined);
  if (!kustomize)
    throw new FailedPreconditionError(
      'kustomize not found: set kustomize.path or run test/scripts/obtain-kustomize.sh',
    );
  const helm = await locateTool('helm', config['helm.path'] || undefined);
  const jsonnet = await locateTool('jsonnet', config['jsonnet.path'] || undefined);
  ctx.logger.info(
    { kustomize, helm: helm ?? 'not configured', jsonnet: jsonnet ?? 'not configured' },
    'rendering tools',
  );

  const { db, bus } = await startBackbone<RepoDatabase>(ctx, { schema: 'repo', migrations: repoMigrations });
  // The backbone's handle also types the event store tables; the credential code needs only its own.
  const repoDb = db as unknown as Kysely<RepoDatabase>;
  await resealAtStartup(repoDb, keyring, [sealedCredentials], ctx.logger);
  const credentials = new CredentialService(repoDb, keyring);
  const live = await liveRepoSettings(ctx, db);
  let cacheBytes = () => 0;
  const metrics = new RepoMetrics(ctx.metrics, () => cacheBytes());
  const egress = egressPolicy({
    denied: config['egress.denied-networks'],
    allowed: config['egress.allowed-networks'],
  });
  const checkouts = await CheckoutStore.create({
    observer: metrics,
    cacheDir: config['cache.dir'],
    maxCacheBytes: config['cache.max-bytes'],
    maxRepoBytes: config['repository.max-bytes'],
    refCacheTtlMs: config['revision.cache-ttl-ms'],
    gitTimeoutMs: config['git.timeout-ms'],
    sshKnownHostsFile: config['ssh.known-hosts-file'],
    egress,
  });
  cacheBytes = () => checkouts.usedBytes;
  const charts = helm
    ? new ChartStore({
        runner: {
          helm,
          egress,
          scratchDir: path.join(config['cache.dir'], 'tools', 'scratch'),
          timeoutMs: config['render.timeout-ms'],
          maxBytes: config['chart.max-bytes'],
        },
        dir: path.join(config['cache.dir'], 'charts'),
        maxCacheBytes: config['chart.cache-max-bytes'],
        resolutionTtlMs: config['revision.cache-ttl-ms'],
      })
    : null;
  const generator = new ManifestGenerator(checkouts, {
    charts,
    observer: metrics,
    kustomizePath: kustomize,
    // Read per render: an applied argocd-cm counts from the next one.
    get kustomizeBuildOptions() {
      return live.get('kustomize.build-options').split(/\s+/).filter(Boolean);
    },
    get kustomizeVersions() {
      return kustomizeVersionsOf(live.get('kustomize.versions'));
    },
    helmPath: helm,
    jsonnetPath: jsonnet,
    scratchDir: path.join(config['cache.dir'], 'tools', 'scratch'),
    renderTimeoutMs: config['render.timeout-ms'],
    cacheEntries: config['manifest.cache-entries'],
  });
  live.onChange((change) => {
    if (change.changed.some((k) => k.startsWith('kustomize.'))) generator.forgetRendered();
  });
  const listing = new RepoListing(checkouts);
  const changes = new ChangeDetector({ db, schema: 'repo', credentials, checkouts, logger: ctx.logger });

  const server = new Server();
  server.addService(
    repov1.RepoServiceService,
    repoServiceImplementation({
      auth,
      credentials,
      checkouts,
      generator,
      listing,
      watch: (key) => touchWatch(db as unknown as RepoDb, key),
      logger: ctx.logger,
      metrics,
      effectiveSettings: (showSource) =>
        effectiveSettings(
          'repo',
          { ...commonSettings, ...repoSettings },
          {
            value: (k) => live.get(k as never),
            source: (k) => live.sourceOf(k),
          },
          showSource,
        ),
    }),
  );
  // Mutual TLS: a connection without a client certificate of the installation's CA is refused.
  const grpc = await listenInternal(server, `${config['grpc.host']}:${config['grpc.port']}`, tls);
  ctx.onShutdown('grpc server', grpc.stop);
  const grpcPort = grpc.port;
  ctx.logger.info({ grpcPort }, 'repo gRPC listening');

  const consumer = await bus.consume({
    durable: 'repo-git-push',
    events: [gitPush],
    handle: (event) => changes.onPush(event),
    onError: (err, info) => ctx.logger.warn({ err, ...info }, 'push event failed'),
  });
  ctx.onShutdown('push consumer', () => consumer.stop());
  await followAppliedSettings(ctx, db, bus, live);
  changes.startPolling(config['poll.interval-ms']);
  ctx.onShutdown('polling', () => changes.stop());

  return { grpcPort, db: repoDb, bus, checkouts, changes };
}
