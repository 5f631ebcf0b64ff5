// Composition of the api: keys, authentication, RBAC, use cases, consumers and both servers, on the
// backbone (database, bus, outbox relay) of startBackbone. startApiService (api-service.ts) calls it
// through runService like every service's start; tests call it with their own database, bus namespace
// and ports, and it starts the backbone itself.
import { startBackbone, type Bus, type OutboxRelay } from '@capstan/events';
import { commonSettings, FailedPreconditionError, loadConfig, type Logger } from '@capstan/service';
import {
  DEFAULT_CONTROL_NAMESPACE,
  DEFAULT_INPUT_LIMITS,
  DEFAULT_YAML_LIMITS,
  type InputLimits,
} from '@capstan/policy';
import type { Kysely } from 'kysely';
import { API_SCHEMA, apiSchemaMigrations } from './migrations/index.js';
import type { ApiDatabase } from './support/db.table.js';
import { loadKeyring, resealAtStartup } from '@capstan/sealing';
import { loadSigningKey, sealedSigningKeys } from './auth/signing-key.js';
import { sealedClusterCredentials } from './clusters/cluster.repository.js';
import { TokenSigner } from './auth/tokens.js';
import { ServiceClient, ServiceTokens, type TlsMaterial } from '@capstan/service-identity';
import { Delegations, loadDelegationKey } from './auth/delegations.js';
import { Authenticator } from './auth/authenticator.js';
import { PolicyStore } from './rbac/policy-store.js';
import { Authorizer } from './rbac/authorizer.js';
import { ProjectsService } from './projects/projects.service.js';
import { ApplicationsService } from './applications/applications.service.js';
import {
  GrpcSyncBackend,
  ManagedResourcesService,
  UnconfiguredSyncBackend,
  type SyncBackend,
} from './applications/managed-resources.js';
import { ClustersService } from './clusters/clusters.service.js';
import {
  RepositoriesService,
  UnconfiguredRepoBackend,
  type RepoBackend,
} from './repositories/repositories.service.js';
import { GrpcRepoBackend } from './repositories/repo-client.js';
import {
  GrpcAppSetBackend,
  UnconfiguredAppSetBackend,
  type AppSetBackend,
} from './applicationsets/appset-client.js';
import { ApplicationSetsService } from './applicationsets/applicationsets.service.js';
import { GeneratedApplicationsService } from './applicationsets/generated-applications.service.js';
import { GeneratorInputsService } from './applicationsets/generator-inputs.service.js';
import { SetOwnersService } from './applicationsets/set-owners.service.js';
import { DeliveredObjectsService } from './delivery/delivered-objects.service.js';
import { DeliveringApplications } from './delivery/delivering-applications.js';
import { AuditService } from './audit/audit.service.js';
import { DeadLettersService } from './admin/dead-letters.service.js';
import { AccountsService } from './accounts/accounts.service.js';
import {
  defaultInitialAdminPasswordFile,
  removeInitialAdminPassword,
  writeInitialAdminPassword,
} from './accounts/initial-admin-password.js';
import {
  DEFAULT_LOGIN_THROTTLE,
  LoginThrottle,
  type LoginThrottleSettings,
} from './accounts/login-throttle.js';
import { ApplyService } from './apply/apply.service.js';
import { startGrpcServer } from './transport/grpc-server.js';
import { startHttpServer } from './transport/http-server.js';
import { startSyncStatusConsumer } from './sync/sync-status.consumer.js';
import { parseExtAccounts, startExtSyncRequestConsumer } from './sync/ext-sync-requests.consumer.js';
import type { ApiServices } from './services.js';
import { rebuildProjections } from './projections/rebuild.js';
import { RequestMetrics } from './transport/request-metrics.js';
import { Registry } from 'prom-client';

export interface ApiConfig {
  databaseUrl: string;
  natsUrl: string;
  /** The api's bus user and password (empty: anonymous). */
  natsUser?: string;
  natsPassword?: string;
  busNamespace: string;
  grpcHost: string;
  grpcPort: number;
  httpHost: string;
  httpPort: number;
  bodyLimit: number;
  /** Bounds on request input and applied YAML (defaults: DEFAULT_INPUT_LIMITS of @capstan/policy). */
  inputLimits?: Partial<InputLimits>;
  policyFile: string;
  policyCsv: string;
  defaultRole: string;
  sessionTtlSeconds: number;
  /** Login throttling (defaults: Argo CD's, DEFAULT_LOGIN_THROTTLE). */
  loginThrottle?: Partial<LoginThrottleSettings>;
  signingKey: string;
  adminPassword: string;
  /** Where a generated admin password is written (mode 600); empty: defaultInitialAdminPasswordFile(). */
  initialAdminPasswordFile?: string;
  serviceTokens: string;
  credentialReaders: readonly string[];
  /** Ed25519 private key (PEM) of delegations; empty: generated on first start and kept sealed. */
  delegationKey: string;
  delegationTtlSeconds: number;
  /**
   * TLS of the gRPC port and of the calls to repo (tls.* settings). Without it the gRPC port is
   * plaintext and refuses every service token (they are bound to client certificates).
   */
  tls?: TlsMaterial | undefined;
  encryptionKeys: string;
  encryptionKeyFile: string;
  /** host:port of the repo service; empty: repository calls answer UNAVAILABLE. */
  repoAddress?: string;
  repoServiceToken?: string;
  /** Argo CD's control-plane namespace (api.control-namespace; default argocd). */
  controlNamespace?: string;
  /** host:port of the appset service; empty: ApplicationSet calls answer UNAVAILABLE. */
  appsetAddress?: string;
  appsetServiceToken?: string;
  /** host:port of the sync service; empty: ManagedResources answers UNAVAILABLE. */
  syncAddress?: string;
  syncServiceToken?: string;
  /** Where request metrics go (the service's /metrics registry). */
  metrics?: Registry;
  /** `bus.ext-accounts`: the Capstan account of each external source that may ask for syncs. */
  extAccounts?: string;
  /** Rebuild the projections from the event store before serving. */
  rebuildProjections?: boolean;
  /**
   * Database, bus and outbox relay already wired (startApiService's, from startBackbone); without it
   * startApi starts them with startBackbone itself (tests).
   */
  backbone?: { db: Kysely<ApiDatabase>; bus: Bus; relay: OutboxRelay };
}

export interface RunningApi {
  grpcPort: number;
  httpPort: number;
  services: ApiServices;
  bus: Bus;
  /** Publishes everything in the outbox now (tests). */
  flushOutbox(): Promise<number>;
  stop(): Promise<void>;
}

export async function startApi(
  config: ApiConfig,
  logger: Logger,
  onStop?: (name: string, stop: () => Promise<void> | void) => void,
): Promise<RunningApi> {
  const stops: { name: string; stop: () => Promise<void> | void }[] = [];
  const defer = (name: string, stop: () => Promise<void> | void) =>
    onStop ? onStop(name, stop) : stops.push({ name, stop });

  const keyring = await loadKeyring(
    { value: config.encryptionKeys, file: config.encryptionKeyFile },
    { value: 'encryption.keys', file: 'encryption.key-file', env: 'CAPSTAN_API_ENCRYPTION_KEYS' },
  );
  const serviceTokens = new ServiceTokens(config.serviceTokens);
  const { db, bus, relay } = config.backbone ?? (await ownBackbone(config, logger, defer));
  if (config.rebuildProjections)
    logger.info(await rebuildProjections(db), 'rebuilt projections from the event store');
  // Key rotation: every sealed row of the api (cluster credentials, the generated token signing and
  // delegation keys) still sealed with another key is re-sealed with the active one.
  await resealAtStartup(db, keyring, [sealedClusterCredentials, sealedSigningKeys], logger);

  const signer = new TokenSigner(await loadSigningKey(db, keyring, config.signingKey));
  const delegationKey = await loadDelegationKey(db, keyring, config.delegationKey);
  const delegations = new Delegations(delegationKey.key, db, config.delegationTtlSeconds);
  if (delegationKey.generated)
    logger.info(
      { publicKey: delegations.publicKeyPem },
      'delegation key generated and kept sealed; give its public key to repo (auth.delegation-public-key)',
    );
  const deliverers = new DeliveringApplications(db);
  const authn = new Authenticator({ db, signer, serviceTokens, delegations, deliverers });
  await authn.start();
  defer('authenticator', () => authn.stop());
  const policy = new PolicyStore({
    db,
    policyFile: config.policyFile,
    policyCsv: config.policyCsv,
    defaultRole: config.defaultRole,
  });
  await policy.start();
  defer('policy', () => policy.stop());
  const authz = new Authorizer(db as unknown as Kysely<unknown>, policy, logger);
  defer('access audit', () => authz.stop());

  const projects = new ProjectsService({ db, authz, policy });
  const applications = new ApplicationsService({
    db,
    authz,
    controlNamespace: config.controlNamespace ?? DEFAULT_CONTROL_NAMESPACE,
  });
  const clusters = new ClustersService({ db, authz, keyring, credentialReaders: config.credentialReaders });
  let backend: RepoBackend = new UnconfiguredRepoBackend();
  if (config.repoAddress) {
    if (!config.tls)
      throw new FailedPreconditionError(
        'repo.address needs mutual TLS: set tls.ca-file, tls.cert-file and tls.key-file',
      );
    const grpcRepo = new GrpcRepoBackend(
      config.repoAddress,
      new ServiceClient({ token: config.repoServiceToken ?? '', tls: config.tls }),
      delegations,
    );
    defer('repo client', () => grpcRepo.close());
    backend = grpcRepo;
  }
  const repositories = new RepositoriesService({ authz, backend });
  let appsetBackend: AppSetBackend = new UnconfiguredAppSetBackend();
  if (config.appsetAddress) {
    if (!config.tls)
      throw new FailedPreconditionError(
        'appset.address needs mutual TLS: set tls.ca-file, tls.cert-file and tls.key-file',
      );
    const grpcAppset = new GrpcAppSetBackend(
      config.appsetAddress,
      new ServiceClient({ token: config.appsetServiceToken ?? '', tls: config.tls }),
      delegations,
    );
    defer('appset client', () => grpcAppset.close());
    appsetBackend = grpcAppset;
  }
  let syncBackend: SyncBackend = new UnconfiguredSyncBackend();
  if (config.syncAddress) {
    if (!config.tls)
      throw new FailedPreconditionError(
        'sync.address needs mutual TLS: set tls.ca-file, tls.cert-file and tls.key-file',
      );
    const grpcSync = new GrpcSyncBackend(
      config.syncAddress,
      new ServiceClient({ token: config.syncServiceToken ?? '', tls: config.tls }),
    );
    defer('sync client', () => grpcSync.close());
    syncBackend = grpcSync;
  }
  const throttle: LoginThrottleSettings = { ...DEFAULT_LOGIN_THROTTLE, ...config.loginThrottle };
  const accounts = new AccountsService({
    db,
    authz,
    authn,
    signer,
    sessionTtlSeconds: config.sessionTtlSeconds,
    throttle: new LoginThrottle(db, throttle),
    failureWindowSeconds: throttle.failureWindowSeconds,
  });
  const inputLimits: InputLimits = { ...DEFAULT_INPUT_LIMITS, ...config.inputLimits };
  const applicationSets = new ApplicationSetsService({
    db,
    authz,
    policy,
    backend: appsetBackend,
    delegations,
  });
  const services: ApiServices = {
    inputLimits,
    db,
    authn,
    authz,
    delegations,
    policy,
    projects,
    applications,
    clusters,
    repositories,
    audit: new AuditService({ db: db as unknown as Kysely<unknown>, authz }),
    deadLetters: new DeadLettersService({ db: db as unknown as Kysely<unknown>, authz }),
    accounts,
    applicationSets,
    generatedApplications: new GeneratedApplicationsService({ db, authz, policy, applications }),
    generatorInputs: new GeneratorInputsService({ db, authz, policy, clusters }),
    setOwners: new SetOwnersService({ authz, authn, delegations }),
    deliveredObjects: new DeliveredObjectsService({
      db,
      authz,
      projects,
      applications,
      applicationSets,
      deliverers,
    }),
    managedResources: new ManagedResourcesService({ applications, backend: syncBackend }),
    apply: new ApplyService({
      db,
      authz,
      projects,
      applications,
      clusters,
      repositories,
      applicationSets,
      yamlLimits: {
        ...inputLimits,
        maxBytes: config.bodyLimit,
        maxAliasCount: DEFAULT_YAML_LIMITS.maxAliasCount,
      },
    }),
  };

  const passwordFile = config.initialAdminPasswordFile || defaultInitialAdminPasswordFile();
  const admin = await accounts.bootstrapAdmin(config.adminPassword, {
    keep: async (password) => {
      try {
        await writeInitialAdminPassword(passwordFile, password);
      } catch (err) {
        throw new Error(
          `cannot write the generated admin password to ${passwordFile} (${(err as NodeJS.ErrnoException).code ?? 'error'}): set auth.initial-admin-password-file to a writable path, or auth.admin-password`,
          { cause: err },
        );
      }
    },
    discard: () => removeInitialAdminPassword(passwordFile),
  });
  if (admin.generated) {
    // Only where it is: the value itself never reaches a log, stdout or stderr.
    logger.warn(
      { file: passwordFile },
      'created the bootstrap admin account; its generated password is in the file (mode 600): log in as admin, change it (capstan account update-password), then delete the file',
    );
  } else if (admin.created) {
    logger.info('created the bootstrap admin account with the configured password');
  }

  const syncStatus = await startSyncStatusConsumer({ bus, db, applications, logger });
  defer('sync status consumer', () => syncStatus.stop());
  const extSync = await startExtSyncRequestConsumer({
    bus,
    db,
    authz,
    applications,
    accounts: parseExtAccounts(config.extAccounts ?? ''),
    logger,
  });
  defer('external sync request consumer', () => extSync.stop());

  const metrics = new RequestMetrics(config.metrics);
  const grpc = await startGrpcServer({
    services,
    logger,
    host: config.grpcHost,
    port: config.grpcPort,
    bodyLimit: config.bodyLimit,
    metrics,
    tls: config.tls,
  });
  defer('grpc server', () => grpc.stop());
  const http = await startHttpServer({
    services,
    logger,
    host: config.httpHost,
    port: config.httpPort,
    bodyLimit: config.bodyLimit,
    metrics,
  });
  defer('http server', () => http.stop());
  logger.info({ grpcPort: grpc.port, httpPort: http.port }, 'api listening');

  return {
    grpcPort: grpc.port,
    httpPort: http.port,
    services,
    bus,
    flushOutbox: () => relay.flush(),
    stop: async () => {
      for (const { name, stop } of stops.reverse()) {
        try {
          await stop();
        } catch (err) {
          logger.error({ err, component: name }, 'error while stopping');
        }
      }
      stops.length = 0;
    },
  };
}

/** The backbone of an api started without one (tests): startBackbone's, with the database and bus of `config`. */
async function ownBackbone(
  config: ApiConfig,
  logger: Logger,
  defer: (name: string, stop: () => Promise<void> | void) => void,
): Promise<{ db: Kysely<ApiDatabase>; bus: Bus; relay: OutboxRelay }> {
  const common = loadConfig(commonSettings, { argv: [], env: {} });
  const backbone = await startBackbone<ApiDatabase>(
    {
      name: 'api',
      config: {
        ...common,
        'database.url': config.databaseUrl,
        'nats.url': config.natsUrl,
        'nats.user': config.natsUser ?? '',
        'nats.password': config.natsPassword ?? '',
        'bus.namespace': config.busNamespace,
      },
      logger,
      metrics: config.metrics ?? new Registry(),
      addReadinessCheck: () => {},
      onShutdown: defer,
    },
    { schema: API_SCHEMA, migrations: apiSchemaMigrations },
  );
  return { db: backbone.db as unknown as Kysely<ApiDatabase>, bus: backbone.bus, relay: backbone.relay };
}
