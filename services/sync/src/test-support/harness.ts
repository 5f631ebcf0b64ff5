// Test harness: the sync service against real PostgreSQL, real NATS and real kube-apiservers.
// The test plays the api: it publishes the project, Application and cluster events and the sync
// requests on the bus (as the api's bus user), and hands the service the clusters' control-plane
// credentials (the port the api's ClusterCredentials gRPC fills in production) and a stand-in for
// the repo service's manifest generation: what the Application's source renders to for a given
// operation is staged by the test (`requestSync(app, { objects })`), never carried by the request.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { startService, type RunningService } from '@capstan/service';
import {
  applicationCreated,
  applicationDeletionRequested,
  applicationUpdated,
  clusterRegistered,
  connectBus,
  newEvent,
  projectCreated,
  projectUpdated,
  settingsChanged,
  readStream,
  syncRequest,
  type Bus,
} from '@capstan/events';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import type { KubeCluster } from '@capstan/test/kube';
import { syncSettings } from '../settings.js';
import { startSync, type SyncConfig } from '../sync-service.js';
import type { ClusterCredentialsSource } from '../kube/cluster-credentials.js';
import { ManifestSourceError, type KubeObject, type ManifestSource } from '../manifests/manifest-source.js';
import type { SyncDb } from '../sync.table.js';
import type { DeliveredObjects, DeliverRequest } from '../delivery/api-delivery.js';
import { operationStream } from '../operations/operations.repository.js';

export interface SyncHarness {
  db: SyncDb;
  /** What the sync handed to the api's DeliveredObjectsService (argoproj.io objects). */
  delivered: DeliverRequest[];
  /** The api's bus (its user publishes the api's events and the sync commands). */
  bus: Bus;
  /** The test bus, to connect as another service (e.g. repo) where a test plays it. */
  testBus: TestBus;
  service: RunningService<SyncConfig>;
  registerCluster(cluster: { server: string }, name: string): Promise<void>;
  putProject(manifest: Record<string, unknown>): Promise<void>;
  /**
   * Publishes settings.changed for an Argo CD object as the api does, and waits until the sync
   * service has stored that version (it is then in force).
   */
  applySettings(object: 'argocd-cm', version: number, data: Record<string, string>): Promise<void>;
  putApplication(manifest: Record<string, unknown>): Promise<void>;
  /**
   * Publishes application.deletion-requested for this manifest (marked with deletionTimestamp and
   * the finalizer, as the api does); returns the deletion's operation id.
   */
  requestDeletion(
    manifest: { metadata: { name: string; namespace: string } },
    propagationPolicy?: 'foreground' | 'background',
  ): Promise<string>;
  requestSync(
    app: { namespace: string; name: string },
    /** objects: what the Application's source renders to for this operation (the repo's stand-in). */
    options?: {
      operationId?: string;
      objects?: unknown[];
      prune?: boolean;
      dryRun?: boolean;
      /** A selective sync (Argo CD's SyncOperation.resources). */
      resources?: { group: string; kind: string; name: string; namespace: string }[];
    },
  ): Promise<string>;
  waitForTerminal(
    operationId: string,
    timeoutMs?: number,
  ): Promise<{ status: string; reason: string | null }>;
  eventsOf(operationId: string): Promise<{ type: string; data: Record<string, unknown> }[]>;
  stop(): Promise<void>;
}

export async function startSyncHarness(
  clusters: KubeCluster[],
  options: {
    impersonation: boolean;
    strict?: boolean;
    manifests?: ManifestSource;
    /** More environment for the service (e.g. OTEL_EXPORTER_OTLP_ENDPOINT). */
    env?: Record<string, string>;
  },
): Promise<SyncHarness> {
  const database: TestDatabase = await createTestDatabase('capstan_sync');
  const testBus: TestBus = await createTestBus('sync');
  const byServer = new Map(clusters.map((c) => [c.server, c]));
  const credentials: ClusterCredentialsSource = {
    async get(ref) {
      // A server no test cluster listens on gets some cluster's credentials: it is down anyway.
      const c = byServer.get(ref.server) ?? clusters[0]!;
      return { name: ref.name, server: ref.server, bearerToken: c.controlPlaneToken, caData: c.caPem };
    },
  };
  const staged = new Map<string, KubeObject[]>();
  const manifests: ManifestSource = {
    async render(app, request) {
      const objects = staged.get(request.operationId);
      if (objects) return { revision: request.revision ?? app.spec.source?.targetRevision ?? null, objects };
      if (options.manifests) return options.manifests.render(app, request);
      throw new ManifestSourceError(`no manifests staged for operation ${request.operationId}`);
    },
  };
  // The api's DeliveredObjectsService is not here: control-plane objects are recorded and reported
  // as delivered, so a test sees what the sync handed over (the api's decisions have their own tests).
  const delivered: DeliverRequest[] = [];
  const delivery: DeliveredObjects = {
    async deliver(request) {
      delivered.push(request);
      return {
        applied: true,
        results: request.objects.map((o) => ({
          kind: o.kind,
          namespace: o.metadata.namespace ?? '',
          name: o.metadata.name,
          action: 'create',
          status: 'Synced',
          message: `${o.kind} ${o.metadata.name} handed to the api`,
        })),
      };
    },
  };
  let db: SyncDb | undefined;
  const service = await startService({
    name: 'sync',
    settings: syncSettings,
    sources: {
      // The switch by flag when on, by environment when off: both sources are exercised.
      argv: [
        ...(options.impersonation ? ['--enable-impersonation'] : []),
        '--sync-parallelism=4',
        '--sync-hook-timeout-ms=20000',
        '--sync-max-attempts=2',
        '--sync-request-timeout-ms=1500',
      ],
      env: {
        DATABASE_URL: database.url,
        ...testBus.env('sync'),
        CAPSTAN_LOG_LEVEL: 'warn',
        CAPSTAN_SYNC_STRICT_SERVICE_ACCOUNTS: String(options.strict === true),
        ...(options.impersonation ? {} : { CAPSTAN_APPLICATION_SYNC_IMPERSONATION_ENABLED: 'false' }),
        ...options.env,
      },
    },
    start: async (ctx) => {
      db = (await startSync(ctx, { credentials, manifests, delivery })).db;
    },
  });
  // The harness plays the api: it publishes the api's events and commands as the api's bus user.
  const bus = await connectBus({ ...testBus.connection('api'), service: 'api' });
  const meta = (subject: string) => ({ subject, actor: 'alice', source: 'capstan/api' });
  const known = new Set<string>();

  const harness: SyncHarness = {
    db: db!,
    delivered,
    bus,
    testBus,
    service,
    async registerCluster(cluster, name) {
      await bus.publish(
        newEvent(
          clusterRegistered.type,
          {
            cluster: {
              name,
              server: cluster.server,
              namespaces: [],
              labels: {},
              credentialType: 'bearer',
              keyId: 'k1',
              insecure: false,
              serverName: '',
              hasCaData: true,
            },
            uid: randomUUID(),
          },
          meta(`clusters/${cluster.server}`),
        ),
      );
      await waitUntil(
        async () =>
          (
            await db!
              .withSchema('sync')
              .selectFrom('clusters')
              .select('name')
              .where('server', '=', cluster.server)
              .executeTakeFirst()
          )?.name === name,
      );
    },
    async applySettings(object, version, data) {
      await bus.publish(
        newEvent(
          settingsChanged.type,
          { object, version, data, sensitiveKeys: [], changedKeys: Object.keys(data) },
          meta(`settings/${object}`),
        ),
      );
      await waitUntil(async () => {
        const row = await db!
          .withSchema('sync')
          .selectFrom('applied_settings')
          .select('version')
          .where('object', '=', object)
          .executeTakeFirst();
        return row?.version === version;
      });
    },
    async putProject(manifest) {
      const name = (manifest.metadata as { name: string }).name;
      const update = known.has(`p/${name}`);
      known.add(`p/${name}`);
      await bus.publish(
        update
          ? newEvent(
              projectUpdated.type,
              { project: manifest as never, changed: ['spec'] },
              meta(`projects/${name}`),
            )
          : newEvent(
              projectCreated.type,
              { project: manifest as never, uid: randomUUID() },
              meta(`projects/${name}`),
            ),
      );
      await waitUntil(async () => {
        const row = await db!
          .withSchema('sync')
          .selectFrom('projects')
          .select('manifest')
          .where('name', '=', name)
          .executeTakeFirst();
        return row !== undefined && isDeepStrictEqual(row.manifest, manifest);
      });
    },
    async putApplication(manifest) {
      const m = manifest.metadata as { name: string; namespace: string };
      const update = known.has(`a/${m.namespace}/${m.name}`);
      known.add(`a/${m.namespace}/${m.name}`);
      await bus.publish(
        update
          ? newEvent(
              applicationUpdated.type,
              { application: manifest as never, changed: ['spec'] },
              meta(`applications/${m.namespace}/${m.name}`),
            )
          : newEvent(
              applicationCreated.type,
              { application: manifest as never, uid: randomUUID() },
              meta(`applications/${m.namespace}/${m.name}`),
            ),
      );
      await waitUntil(async () => {
        const row = await db!
          .withSchema('sync')
          .selectFrom('applications')
          .select('manifest')
          .where('namespace', '=', m.namespace)
          .where('name', '=', m.name)
          .executeTakeFirst();
        return row !== undefined && isDeepStrictEqual(row.manifest, manifest);
      });
    },
    async requestDeletion(manifest, propagationPolicy = 'background') {
      const operationId = randomUUID();
      const { namespace, name } = manifest.metadata;
      const finalizer = `resources-finalizer.argocd.argoproj.io${propagationPolicy === 'background' ? '/background' : ''}`;
      const marked = {
        ...manifest,
        metadata: {
          ...manifest.metadata,
          finalizers: [finalizer],
          deletionTimestamp: new Date().toISOString(),
        },
      };
      await bus.publish(
        newEvent(
          applicationDeletionRequested.type,
          { application: marked as never, operationId, propagationPolicy },
          meta(`applications/${namespace}/${name}`),
        ),
      );
      return operationId;
    },
    async requestSync(app, o = {}) {
      const operationId = o.operationId ?? randomUUID();
      if (o.objects) staged.set(operationId, o.objects as KubeObject[]);
      await bus.publish(
        newEvent(
          syncRequest.type,
          {
            operationId,
            application: app,
            dryRun: o.dryRun ?? false,
            prune: o.prune ?? false,
            ...(o.resources ? { resources: o.resources } : {}),
          },
          meta(`applications/${app.namespace}/${app.name}`),
        ),
      );
      return operationId;
    },
    async waitForTerminal(operationId, timeoutMs = 60_000) {
      let row: { status: string; reason: string | null } | undefined;
      await waitUntil(async () => {
        row = await db!
          .withSchema('sync')
          .selectFrom('operations')
          .select(['status', 'reason'])
          .where('operation_id', '=', operationId)
          .executeTakeFirst();
        return row?.status === 'succeeded' || row?.status === 'failed';
      }, timeoutMs);
      return row!;
    },
    async eventsOf(operationId) {
      const events = await readStream(db!, 'sync', operationStream(operationId));
      return events.map((e) => ({ type: e.envelope.type, data: e.envelope.data as Record<string, unknown> }));
    },
    async stop() {
      await bus.close();
      await service.stop();
      await testBus.cleanup();
      await database.drop();
    },
  };
  return harness;
}

export async function waitUntil(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
