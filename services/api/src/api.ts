// Composition of the api: keys, authentication, RBAC, use cases, consumers and both servers, on the
// backbone (database, bus, outbox relay) of startBackbone. startApiService (api-service.ts) calls it
// through runService like every service's start; tests call it with their own database, bus namespace
// and ports, and it starts the backbone itself.
import { startBackbone, type Bus, type OutboxRelay } from '@capstan/events';
import { commonSettings, loadConfig, stopInReverse, type Logger } from '@capstan/service';
import {
  DEFAULT_CONTROL_NAMESPACE,
  DEFAULT_INPUT_LIMITS,
  DEFAULT_YAML_LIMITS,
  type InputLimits,
} from '@capstan/policy';
import type { Kysely } from 'kysely';
import { API_SCHEMA, apiSchemaMigrations } from './migrations/index.js';
import type { ApiDatabase } from './support/db.table.js';
import { loadKeyring, resealAtStartup, type Keyring } from '@capstan/sealing';
import { loadSigningKey, sealedSigningKeys } from './auth/signing-key.js';
import { sealedSettingsSecrets } from './settings/settings-secrets.js';
import { sealedClusterCredentials } from './clusters/cluster.repository.js';
import { TokenSigner } from './auth/tokens.js';
import { ServiceTokens, type TlsMaterial } from '@capstan/service-identity';
import { Delegations, loadDelegationKey } from './auth/delegations.js';
import { Authenticator } from './auth/authenticator.js';
import { PolicyStore } from './rbac/policy-store.js';
import { SettingsService } from './settings/settings.service.js';
import { SettingsView, type SettingsViewSource } from './settings/settings-view.js';
import { Authorizer } from './rbac/authorizer.js';
import { ProjectsService } from './projects/projects.service.js';
import { ProjectTokensService } from './projects/project-tokens.service.js';
import { SsoService } from './sso/sso.service.js';
import { ApplicationsService } from './applications/applications.service.js';
import { ManagedResourcesService } from './applications/managed-resources.js';
import { repositoryUses } from './repositories/shared-checkouts.js';
import { ClustersService } from './clusters/clusters.service.js';
import { RepositoriesService } from './repositories/repositories.service.js';
import { connectPeers, type PeerBackends } from './peers.js';
import { ApplicationSetsService } from './applicationsets/applicationsets.service.js';
import { GeneratedApplicationsService } from './applicationsets/generated-applications.service.js';
import { GeneratorInputsService } from './applicationsets/generator-inputs.service.js';
import { SetOwnersService } from './applicationsets/set-owners.service.js';
import { DeliveredObjectsService } from './delivery/delivered-objects.service.js';
import { DeliveringApplications } from './delivery/delivering-applications.js';
import { AuditService } from './audit/audit.service.js';
import { DeadLettersService } from './admin/dead-letters.service.js';
import { AccountsService } from './accounts/accounts.service.js';
import { bootstrapAdminAccount } from './accounts/initial-admin-password.js';
import {
  DEFAULT_LOGIN_THROTTLE,
  LoginThrottle,
  type LoginThrottleSettings,
} from './accounts/login-throttle.js';
import { ApplyService } from './apply/apply.service.js';
import { startGrpcServer } from './transport/grpc-server.js';
import { startHttpServer } from './transport/http-server.js';
import { startSyncStatusConsumer } from './sync/sync-status.consumer.js';
import { ApplicationChanges } from './applications/application-changes.js';
import { parseExtAccounts, startExtSyncRequestConsumer } from './sync/ext-sync-requests.consumer.js';
import type { ApiServices } from './services.js';
import { rebuildProjections } from './projections/rebuild.js';
import { RequestMetrics } from './transport/request-metrics.js';
import { Registry } from 'prom-client';
import { WebhookService } from './webhooks/webhook.service.js';
import { DEFAULT_WEBHOOK_SETTINGS, WebhookConfig, type WebhookSettings } from './webhooks/webhook-config.js';
import { NotificationsSettings } from './notifications/notifications-config.js';
import { Notifier } from './notifications/notifier.js';
import {
  DEFAULT_DELIVERY_OPTIONS,
  NotificationDelivery,
  type DeliveryOptions,
} from './notifications/delivery.js';

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
  /** The web UI's built files (api.ui.dir); empty or absent: the workspace's ui/dist. */
  uiDir?: string;
  /** Bounds on request input and applied YAML (defaults: DEFAULT_INPUT_LIMITS of @capstan/policy). */
  inputLimits?: Partial<InputLimits>;
  policyFile: string;
  policyCsv: string;
  defaultRole: string;
  /**
   * Argo CD configuration objects applied through the api: `strict` refuses unknown and not
   * implemented keys; `view` is what `capstan admin settings` shows of the api's own settings
   * (its sources say which ones a flag or the environment pinned).
   */
  settings?: { strict: boolean; view?: SettingsViewSource };
  sessionTtlSeconds: number;
  /** Login throttling (defaults: Argo CD's, DEFAULT_LOGIN_THROTTLE). */
  loginThrottle?: Partial<LoginThrottleSettings>;
  signingKey: string;
  adminPassword: string;
  /** The value of `$oidc.clientSecret` in argocd-cm's oidc.config (auth.oidc-client-secret). */
  oidcClientSecret?: string;
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
  /** The git webhook's secrets and bounds (webhook.* settings; defaults: DEFAULT_WEBHOOK_SETTINGS). */
  webhook?: Partial<WebhookSettings>;
  /** Argo CD Notifications' deliveries: attempts, backoff, bounds (defaults: DEFAULT_DELIVERY_OPTIONS). */
  notifications?: Partial<DeliveryOptions>;
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

type Defer = (name: string, stop: () => Promise<void> | void) => void;

export async function startApi(
  config: ApiConfig,
  logger: Logger,
  onStop?: (name: string, stop: () => Promise<void> | void) => void,
): Promise<RunningApi> {
  const stops: { name: string; stop: () => Promise<void> | void }[] = [];
  const defer: Defer = (name, stop) => (onStop ? onStop(name, stop) : stops.push({ name, stop }));

  const keyring = await loadKeyring(
    { value: config.encryptionKeys, file: config.encryptionKeyFile },
    { value: 'encryption.keys', file: 'encryption.key-file', env: 'CAPSTAN_API_ENCRYPTION_KEYS' },
  );
  const { db, bus, relay } = config.backbone ?? (await ownBackbone(config, logger, defer));
  if (config.rebuildProjections)
    logger.info(await rebuildProjections(db), 'rebuilt projections from the event store');
  // Key rotation: every sealed row of the api (cluster credentials, the generated token signing and
  // delegation keys, applied webhook secrets) still sealed with another key is re-sealed with the active one.
  await resealAtStartup(
    db,
    keyring,
    [sealedClusterCredentials, sealedSigningKeys, sealedSettingsSecrets],
    logger,
  );

  const access = await startAccessControl(config, { db, keyring, logger, defer });
  const peers = connectPeers(config, access.delegations, defer);
  const services = createServices(config, access, peers, keyring, logger);
  await bootstrapAdminAccount(services.accounts, config, logger);

  const delivery = new NotificationDelivery({
    db,
    settings: services.notifications,
    logger,
    options: { ...DEFAULT_DELIVERY_OPTIONS, ...config.notifications },
  });
  delivery.start();
  defer('notification delivery', () => delivery.stop());
  const notifier = new Notifier({
    db,
    settings: services.notifications,
    logger,
    queued: () => delivery.wake(),
  });
  const syncStatus = await startSyncStatusConsumer({
    bus,
    db,
    applications: services.applications,
    logger,
    changes: services.changes,
    notifier,
  });
  defer('sync status consumer', () => syncStatus.stop());
  const extSync = await startExtSyncRequestConsumer({
    bus,
    db,
    authz: access.authz,
    applications: services.applications,
    accounts: parseExtAccounts(config.extAccounts ?? ''),
    logger,
  });
  defer('external sync request consumer', () => extSync.stop());

  const { grpc, http } = await startServers(config, services, logger, defer);
  return {
    grpcPort: grpc.port,
    httpPort: http.port,
    services,
    bus,
    flushOutbox: () => relay.flush(),
    stop: () => stopInReverse(stops, logger),
  };
}

interface AccessControl {
  db: Kysely<ApiDatabase>;
  signer: TokenSigner;
  delegations: Delegations;
  deliverers: DeliveringApplications;
  authn: Authenticator;
  policy: PolicyStore;
  authz: Authorizer;
}

/** Who calls (tokens, delegations, service identities) and what they may do (RBAC), audited. */
async function startAccessControl(
  config: ApiConfig,
  deps: { db: Kysely<ApiDatabase>; keyring: Keyring; logger: Logger; defer: Defer },
): Promise<AccessControl> {
  const { db, keyring, logger, defer } = deps;
  const signer = new TokenSigner(await loadSigningKey(db, keyring, config.signingKey));
  const delegationKey = await loadDelegationKey(db, keyring, config.delegationKey);
  const delegations = new Delegations(delegationKey.key, db, config.delegationTtlSeconds);
  if (delegationKey.generated)
    logger.info(
      { publicKey: delegations.publicKeyPem },
      'delegation key generated and kept sealed; give its public key to repo (auth.delegation-public-key)',
    );
  const deliverers = new DeliveringApplications(db);
  const serviceTokens = new ServiceTokens(config.serviceTokens);
  const authn = new Authenticator({ db, signer, serviceTokens, delegations, deliverers });
  await authn.start();
  defer('authenticator', () => authn.stop());
  const pinned = (key: string) =>
    ['flag', 'env'].includes(config.settings?.view?.report?.sources[key]?.kind ?? '');
  const policy = new PolicyStore({
    db,
    policyFile: config.policyFile,
    policyCsv: config.policyCsv,
    defaultRole: config.defaultRole,
    pinned: { policyCsv: pinned('rbac.policy-csv'), defaultRole: pinned('rbac.default-role') },
  });
  await policy.start();
  defer('policy', () => policy.stop());
  const authz = new Authorizer(db as unknown as Kysely<unknown>, policy, logger);
  defer('access audit', () => authz.stop());
  return { db, signer, delegations, deliverers, authn, policy, authz };
}

/** The use cases both transports serve (services.ts). */
function createServices(
  config: ApiConfig,
  access: AccessControl,
  peers: PeerBackends,
  keyring: Keyring,
  logger: Logger,
): ApiServices {
  const { db, authz, authn, policy, delegations, deliverers } = access;
  const projects = new ProjectsService({ db, authz, policy });
  const applications = new ApplicationsService({
    db,
    authz,
    controlNamespace: config.controlNamespace ?? DEFAULT_CONTROL_NAMESPACE,
  });
  const clusters = new ClustersService({ db, authz, keyring, credentialReaders: config.credentialReaders });
  const repositories = new RepositoriesService({
    authz,
    backend: peers.repo,
    uses: () => repositoryUses(db),
  });
  const throttle: LoginThrottleSettings = { ...DEFAULT_LOGIN_THROTTLE, ...config.loginThrottle };
  const accounts = new AccountsService({
    db,
    authz,
    authn,
    signer: access.signer,
    sessionTtlSeconds: config.sessionTtlSeconds,
    throttle: new LoginThrottle(db, throttle),
    failureWindowSeconds: throttle.failureWindowSeconds,
  });
  const inputLimits: InputLimits = { ...DEFAULT_INPUT_LIMITS, ...config.inputLimits };
  const applicationSets = new ApplicationSetsService({
    db,
    authz,
    policy,
    backend: peers.appset,
    delegations,
  });
  const webhookConfig = new WebhookConfig(
    { db, keyring },
    { ...DEFAULT_WEBHOOK_SETTINGS, ...config.webhook },
  );
  const notifications = new NotificationsSettings({ db, keyring });
  const settings = new SettingsService({
    db,
    keyring,
    strict: config.settings?.strict ?? false,
    // This replica follows an applied argocd-rbac-cm (RBAC), argocd-cm (account keys, webhook bound)
    // and argocd-secret (webhook secrets) at once; others within their refresh (2 s).
    onChanged: async () => {
      authn.forgetAccounts();
      webhookConfig.forget();
      notifications.forget();
      await policy.reload();
    },
  });
  return {
    inputLimits,
    settings,
    notifications,
    settingsView: new SettingsView({
      authz,
      settings,
      ...(config.settings?.view ? { own: config.settings.view } : {}),
      // Each peer lists its own effective settings over its internal gRPC (absent: not configured).
      peers: (['sync', 'repo', 'appset'] as const).map((name) => {
        const peer = peers[name];
        return peer.settings ? { name, settings: (s: boolean) => peer.settings!(s) } : { name };
      }),
    }),
    db,
    authn,
    authz,
    delegations,
    policy,
    projects,
    projectTokens: new ProjectTokensService({ db, authz, authn, signer: access.signer }),
    applications,
    clusters,
    repositories,
    audit: new AuditService({ db: db as unknown as Kysely<unknown>, authz }),
    deadLetters: new DeadLettersService({ db: db as unknown as Kysely<unknown>, authz }),
    accounts,
    sso: new SsoService({
      db,
      authz,
      authn,
      signer: access.signer,
      sessionTtlSeconds: config.sessionTtlSeconds,
      clientSecret: config.oidcClientSecret ?? '',
      keyring,
    }),
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
    managedResources: new ManagedResourcesService({ applications, backend: peers.sync, authz }),
    changes: new ApplicationChanges(),
    webhooks: new WebhookService({
      db,
      config: webhookConfig,
      logger,
      ...(config.metrics ? { metrics: config.metrics } : {}),
    }),
    apply: new ApplyService({
      db,
      authz,
      projects,
      applications,
      clusters,
      repositories,
      applicationSets,
      settings,
      yamlLimits: {
        ...inputLimits,
        maxBytes: config.bodyLimit,
        maxAliasCount: DEFAULT_YAML_LIMITS.maxAliasCount,
      },
    }),
  };
}

/** The gRPC and HTTP/JSON servers of the same operations, with one request-metrics registry. */
async function startServers(config: ApiConfig, services: ApiServices, logger: Logger, defer: Defer) {
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
    uiDir: config.uiDir,
  });
  defer('http server', () => http.stop());
  logger.info({ grpcPort: grpc.port, httpPort: http.port }, 'api listening');
  return { grpc, http };
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
