// Starts the real api (gRPC + HTTP, real PostgreSQL and NATS) for a test file: a fresh database, a
// unique bus namespace, free ports, a known admin password, and the run's internal PKI (the gRPC
// port speaks TLS; users' clients have no certificate, services' clients present their own). Used by the api's own integration
// tests. The api starts as the other services' harnesses start theirs: startApi through startService,
// the settings from the environment (database, bus, TLS) and a configuration file (the rest).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestBus,
  createTestDatabase,
  testPki,
  type ServiceName,
  type TestBus,
  type TestDatabase,
  type TestPki,
} from '@capstan/test/infra';
import { generateKeyringJson } from '@capstan/sealing';
import { channelCredentials } from '@capstan/service-identity';
import { startService, type RunningService } from '@capstan/service';
import { credentials } from '@grpc/grpc-js';
import { apiv1, bearer, unary } from '@capstan/proto';
import { apiSettings } from '../settings.js';
import { startApi, type ApiConfig, type ApiHandles, type ApiPorts } from '../api-service.js';

export const ADMIN_PASSWORD = 'admin-password-for-tests';
export const SYNC_TOKEN = 'sync-service-token-for-tests-0123456789abcdef';
export const APPSET_TOKEN = 'appset-service-token-for-tests-0123456789abcdef';

/** Settings a test gives (kept in the configuration file: none of them is pinned). */
export type ApiOverrides = Partial<ApiConfig>;

export interface Harness {
  api: ApiHandles;
  service: RunningService<ApiConfig>;
  db: TestDatabase;
  bus: TestBus;
  grpcAddress: string;
  httpUrl: string;
  pki: TestPki;
  login(username: string, password: string): Promise<string>;
  clients(): {
    projects: apiv1.ProjectServiceClient;
    applications: apiv1.ApplicationServiceClient;
    clusters: apiv1.ClusterServiceClient;
    credentials: apiv1.ClusterCredentialsClient;
    accounts: apiv1.AccountServiceClient;
    sessions: apiv1.SessionServiceClient;
    audit: apiv1.AuditServiceClient;
    apply: apiv1.ApplyServiceClient;
    repositories: apiv1.RepositoryServiceClient;
    applicationSets: apiv1.ApplicationSetServiceClient;
    applicationSetWrites: apiv1.ApplicationSetWritesServiceClient;
    delegation: apiv1.DelegationServiceClient;
  };
  /** Clients on a channel presenting `service`'s client certificate (with its token: the service). */
  serviceClients(service: ServiceName): ReturnType<Harness['clients']>;
  /**
   * Stops the api and starts it again on the same database and bus with `overrides` on top of the
   * first start's configuration (a restart after a configuration change, e.g. a new keyring) and
   * with `ports` instead of the first start's. Clients made before keep the old address: make new ones.
   */
  restart(overrides: ApiOverrides, ports?: ApiPorts): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(overrides: ApiOverrides = {}, ports: ApiPorts = {}): Promise<Harness> {
  const db = await createTestDatabase('capstan_api');
  const bus = await createTestBus('api');
  const pki = await testPki();
  const dir = mkdtempSync(join(tmpdir(), 'capstan-api-harness-'));
  const settings: ApiOverrides = {
    'grpc.port': 0,
    'api.http.port': 0,
    'api.body-limit': 256 * 1024,
    'auth.admin-password': ADMIN_PASSWORD,
    'auth.service-tokens': `sync=${SYNC_TOKEN},appset=${APPSET_TOKEN}`,
    'auth.credential-readers': 'sync',
    'auth.delegation-key': pki.delegation.privateKeyPem,
    'encryption.keys': generateKeyringJson(),
    ...overrides,
  };
  const start = async (given: ApiOverrides, givenPorts: ApiPorts) => {
    const file = join(dir, 'api.yaml');
    writeFileSync(file, JSON.stringify(given));
    let handles: ApiHandles | undefined;
    const service = await startService({
      name: 'api',
      settings: apiSettings,
      sources: {
        argv: [],
        file,
        env: {
          DATABASE_URL: db.url,
          ...bus.env('api'),
          ...pki.env('api'),
          CAPSTAN_LOG_LEVEL: 'warn',
          CAPSTAN_HTTP_PORT: '0',
        },
      },
      start: async (ctx) => {
        handles = await startApi(ctx, givenPorts);
      },
    });
    return { service, handles: handles! };
  };
  let { service, handles: api } = await start(settings, ports);
  let grpcAddress = `127.0.0.1:${api.grpcPort}`;
  const userChannel = credentials.createSsl(pki.material('api').ca);
  const made: { close(): void }[] = [];
  const track = <T extends { close(): void }>(c: T) => (made.push(c), c);
  const clientsOn = (channel: ReturnType<typeof credentials.createInsecure>) => ({
    projects: track(new apiv1.ProjectServiceClient(grpcAddress, channel)),
    applications: track(new apiv1.ApplicationServiceClient(grpcAddress, channel)),
    clusters: track(new apiv1.ClusterServiceClient(grpcAddress, channel)),
    credentials: track(new apiv1.ClusterCredentialsClient(grpcAddress, channel)),
    accounts: track(new apiv1.AccountServiceClient(grpcAddress, channel)),
    sessions: track(new apiv1.SessionServiceClient(grpcAddress, channel)),
    audit: track(new apiv1.AuditServiceClient(grpcAddress, channel)),
    apply: track(new apiv1.ApplyServiceClient(grpcAddress, channel)),
    repositories: track(new apiv1.RepositoryServiceClient(grpcAddress, channel)),
    applicationSets: track(new apiv1.ApplicationSetServiceClient(grpcAddress, channel)),
    applicationSetWrites: track(new apiv1.ApplicationSetWritesServiceClient(grpcAddress, channel)),
    delegation: track(new apiv1.DelegationServiceClient(grpcAddress, channel)),
  });
  return {
    get api() {
      return api;
    },
    get service() {
      return service;
    },
    db,
    bus,
    get grpcAddress() {
      return grpcAddress;
    },
    get httpUrl() {
      return `http://127.0.0.1:${api.httpPort}`;
    },
    async login(username, password) {
      const c = track(new apiv1.SessionServiceClient(grpcAddress, userChannel));
      return (await unary(c.create.bind(c), { username, password })).token;
    },
    pki,
    clients: () => clientsOn(userChannel),
    serviceClients: (service) => clientsOn(channelCredentials(pki.material(service))),
    async restart(changes, newPorts = {}) {
      await service.stop();
      ({ service, handles: api } = await start({ ...settings, ...changes }, newPorts));
      grpcAddress = `127.0.0.1:${api.grpcPort}`;
    },
    async stop() {
      for (const c of made) c.close();
      await service.stop();
      await bus.cleanup();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export { bearer, unary };
