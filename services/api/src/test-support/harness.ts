// Starts the real api (gRPC + HTTP, real PostgreSQL and NATS) for a test file: a fresh database, a
// unique bus namespace, free ports, a known admin password, and the run's internal PKI (the gRPC
// port speaks TLS; users' clients have no certificate, services' clients present their own). Used by the api's own integration
// tests; end-to-end tests and benchmarks use startApi through the package entry point the same way.
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
import { createLogger } from '@capstan/service';
import { credentials } from '@grpc/grpc-js';
import { apiv1, bearer, unary } from '@capstan/proto';
import { startApi, type ApiConfig, type RunningApi } from '../api.js';

export const ADMIN_PASSWORD = 'admin-password-for-tests';
export const SYNC_TOKEN = 'sync-service-token-for-tests-0123456789abcdef';
export const APPSET_TOKEN = 'appset-service-token-for-tests-0123456789abcdef';

export interface Harness {
  api: RunningApi;
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
   * first start's configuration (a restart after a configuration change, e.g. a new keyring).
   * Clients made before keep the old address: make new ones.
   */
  restart(overrides: Partial<ApiConfig>): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(overrides: Partial<ApiConfig> = {}): Promise<Harness> {
  const db = await createTestDatabase('capstan_api');
  const bus = await createTestBus('api');
  const logger = createLogger('api', { level: 'warn' });
  const pki = await testPki();
  const config: ApiConfig = {
    databaseUrl: db.url,
    natsUrl: bus.url,
    ...(bus.credentials('api') ? { natsUser: 'api', natsPassword: bus.credentials('api')!.password } : {}),
    busNamespace: bus.namespace,
    grpcHost: '127.0.0.1',
    grpcPort: 0,
    httpHost: '127.0.0.1',
    httpPort: 0,
    bodyLimit: 256 * 1024,
    policyFile: '',
    policyCsv: '',
    defaultRole: '',
    sessionTtlSeconds: 3600,
    signingKey: '',
    adminPassword: ADMIN_PASSWORD,
    serviceTokens: `sync=${SYNC_TOKEN},appset=${APPSET_TOKEN}`,
    credentialReaders: ['sync'],
    delegationKey: pki.delegation.privateKeyPem,
    delegationTtlSeconds: 120,
    tls: pki.material('api'),
    encryptionKeys: generateKeyringJson(),
    encryptionKeyFile: '',
    ...overrides,
  };
  let api = await startApi(config, logger);
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
    async restart(changes) {
      await api.stop();
      api = await startApi({ ...config, ...changes }, logger);
      grpcAddress = `127.0.0.1:${api.grpcPort}`;
    },
    async stop() {
      for (const c of made) c.close();
      await api.stop();
      await bus.cleanup();
      await db.drop();
    },
  };
}

export { bearer, unary };
