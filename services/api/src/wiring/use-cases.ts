// The api's use cases (services.ts), wired once and shared by both transports, in named steps: the
// catalog (projects, applications, clusters, repositories, sets), the configuration applied as Argo CD
// objects, sessions and accounts, the internal services of the other Capstan services, and apply.
import type { Kysely } from 'kysely';
import type { ServiceContext } from '@capstan/service';
import type { Keyring } from '@capstan/sealing';
import { DEFAULT_YAML_LIMITS, type InputLimits } from '@capstan/policy';
import type { ApiConfig } from '../api-service.js';
import type { ApiServices } from '../services.js';
import type { PeerBackends } from '../peers.js';
import type { AccessControl } from './access-control.js';
import { ownSettingsView, pinnedBy } from './settings-view.js';
import { webhookSettings } from '../settings.js';
import { ProjectsService } from '../projects/projects.service.js';
import { ProjectTokensService } from '../projects/project-tokens.service.js';
import { SsoService } from '../sso/sso.service.js';
import { ApplicationsService } from '../applications/applications.service.js';
import { ManagedResourcesService } from '../applications/managed-resources.js';
import { ApplicationChanges } from '../applications/application-changes.js';
import { repositoryUses } from '../repositories/shared-checkouts.js';
import { ClustersService } from '../clusters/clusters.service.js';
import { RepositoriesService } from '../repositories/repositories.service.js';
import { ApplicationSetsService } from '../applicationsets/applicationsets.service.js';
import { GeneratedApplicationsService } from '../applicationsets/generated-applications.service.js';
import { GeneratorInputsService } from '../applicationsets/generator-inputs.service.js';
import { SetOwnersService } from '../applicationsets/set-owners.service.js';
import { DeliveredObjectsService } from '../delivery/delivered-objects.service.js';
import { AuditService } from '../audit/audit.service.js';
import { DeadLettersService } from '../admin/dead-letters.service.js';
import { AccountsService } from '../accounts/accounts.service.js';
import { LoginThrottle } from '../accounts/login-throttle.js';
import { ApplyService } from '../apply/apply.service.js';
import { SettingsService } from '../settings/settings.service.js';
import { SettingsView } from '../settings/settings-view.js';
import { WebhookService } from '../webhooks/webhook.service.js';
import { DEFAULT_WEBHOOK_SETTINGS, WebhookConfig, type WebhookSettings } from '../webhooks/webhook-config.js';
import { NotificationsSettings } from '../notifications/notifications-config.js';
import { ownerStanding } from '../sso/sso-subjects.js';
import { LiveApiSettings } from '../settings/live-api-settings.js';

export interface UseCaseDeps {
  access: AccessControl;
  peers: PeerBackends;
  keyring: Keyring;
  /** Webhook bounds on top of the webhook.* settings (tests: a rate below the settings' range). */
  webhook?: Partial<WebhookSettings> | undefined;
}

type Catalog = Pick<
  ApiServices,
  'projects' | 'applications' | 'clusters' | 'repositories' | 'applicationSets'
>;
type Configuration = Pick<ApiServices, 'settings' | 'settingsView' | 'notifications' | 'liveSettings'> & {
  webhookConfig: WebhookConfig;
};

export function createServices(ctx: ServiceContext<ApiConfig>, deps: UseCaseDeps): ApiServices {
  const { db, authz, authn, policy, delegations } = deps.access;
  const catalog = catalogUseCases(ctx.config, deps);
  const { webhookConfig, ...configuration } = configurationUseCases(ctx, deps);
  const inputLimits = inputLimitsOf(ctx.config);
  return {
    inputLimits,
    ...configuration,
    ...catalog,
    ...sessionUseCases(ctx.config, deps),
    ...internalUseCases(deps, catalog, ctx.config['auth.sso.owner-max-verification-age-seconds']),
    db,
    authn,
    authz,
    delegations,
    policy,
    audit: new AuditService({ db: db as unknown as Kysely<unknown>, authz }),
    deadLetters: new DeadLettersService({ db: db as unknown as Kysely<unknown>, authz }),
    changes: new ApplicationChanges(),
    webhooks: new WebhookService({ db, config: webhookConfig, logger: ctx.logger, metrics: ctx.metrics }),
    apply: new ApplyService({
      db,
      authz,
      ...catalog,
      settings: configuration.settings,
      yamlLimits: {
        ...inputLimits,
        maxBytes: ctx.config['api.body-limit'],
        maxAliasCount: DEFAULT_YAML_LIMITS.maxAliasCount,
      },
    }),
  };
}

/** Bounds on every request's input (dispatch) and every applied YAML document. */
function inputLimitsOf(config: ApiConfig): InputLimits {
  return {
    maxDepth: config['api.input.max-depth'],
    maxStringLength: config['api.input.max-string-length'],
    maxEntries: config['api.input.max-entries'],
  };
}

/** What tenants declare: projects, applications, clusters, repositories and ApplicationSets. */
function catalogUseCases(config: ApiConfig, deps: UseCaseDeps): Catalog {
  const { db, authz, policy, delegations } = deps.access;
  return {
    projects: new ProjectsService({ db, authz, policy }),
    applications: new ApplicationsService({ db, authz, controlNamespace: config['api.control-namespace'] }),
    clusters: new ClustersService({
      db,
      authz,
      keyring: deps.keyring,
      credentialReaders: list(config['auth.credential-readers']),
    }),
    repositories: new RepositoriesService({
      authz,
      backend: deps.peers.repo,
      uses: () => repositoryUses(db),
    }),
    applicationSets: new ApplicationSetsService({
      db,
      authz,
      policy,
      backend: deps.peers.appset,
      delegations,
    }),
  };
}

/**
 * Applied Argo CD configuration objects (argocd-cm, argocd-secret, argocd-rbac-cm, notifications), and
 * what `capstan admin settings` shows of the api and, over their internal gRPC, of its peers.
 */
function configurationUseCases(ctx: ServiceContext<ApiConfig>, deps: UseCaseDeps): Configuration {
  const { db, authn, authz, policy } = deps.access;
  const keyring = deps.keyring;
  const webhookConfig = new WebhookConfig(
    { db, keyring },
    { ...DEFAULT_WEBHOOK_SETTINGS, ...webhookSettingsOf(ctx), ...deps.webhook },
  );
  const notifications = new NotificationsSettings({ objects: deps.access.objects, keyring });
  // The api's own settings follow what this service stores (read lazily, after `settings` exists).
  const liveSettings = new LiveApiSettings(ctx, () => settings.applied());
  const settings = new SettingsService({
    db,
    keyring,
    strict: ctx.config['settings.strict'],
    // This replica follows an applied argocd-rbac-cm (RBAC), argocd-cm (account keys, webhook bound),
    // argocd-secret (webhook secrets) and its own settings (log level) at once; others within their
    // refresh (2 s).
    onChanged: async () => {
      authn.forgetAccounts();
      webhookConfig.forget();
      notifications.forget();
      await policy.reload();
      await liveSettings.refresh();
    },
  });
  const settingsView = new SettingsView({
    authz,
    settings,
    objects: deps.access.objects,
    own: ownSettingsView(liveSettings),
    // Each peer lists its own effective settings over its internal gRPC (absent: not configured).
    peers: (['sync', 'repo', 'appset'] as const).map((name) => {
      const peer = deps.peers[name];
      return peer.settings ? { name, settings: (s: boolean) => peer.settings!(s) } : { name };
    }),
  });
  return { settings, settingsView, notifications, webhookConfig, liveSettings };
}

/** The webhook.* settings; those a flag or the environment gave are pinned against applied objects. */
function webhookSettingsOf(ctx: ServiceContext<ApiConfig>): Partial<WebhookSettings> {
  const c = ctx.config;
  const pinned = pinnedBy(ctx);
  return {
    secrets: {
      github: c['webhook.github.secret'],
      gitlab: c['webhook.gitlab.secret'],
      bitbucket: c['webhook.bitbucket.uuid'],
      bitbucketserver: c['webhook.bitbucketserver.secret'],
      gogs: c['webhook.gogs.secret'],
    },
    maxPayloadSizeMB: c['webhook.max-payload-size-mb'],
    allowUnsigned: c['webhook.allow-unsigned'],
    pinned: new Set(Object.keys(webhookSettings).filter(pinned)),
    ratePerAddress: c['webhook.rate-limit.per-address'],
    burst: c['webhook.rate-limit.burst'],
    perRepositoryPerMinute: c['webhook.rate-limit.per-repository'],
    maxInFlight: c['webhook.max-in-flight'],
  };
}

/** Sessions (local accounts with login throttling, single sign-on) and project tokens. */
function sessionUseCases(
  config: ApiConfig,
  deps: UseCaseDeps,
): Pick<ApiServices, 'accounts' | 'sso' | 'projectTokens'> {
  const { db, authz, authn, signer, objects } = deps.access;
  const sessionTtlSeconds = config['auth.session-ttl-seconds'];
  const throttle = {
    maxFailCount: config['auth.login.max-fail-count'],
    maxFailCountPerAddress: config['auth.login.max-fail-count-per-address'],
    failureWindowSeconds: config['auth.login.failure-window-seconds'],
    maxCacheSize: config['auth.login.max-cache-size'],
  };
  return {
    accounts: new AccountsService({
      db,
      objects,
      authz,
      authn,
      signer,
      sessionTtlSeconds,
      throttle: new LoginThrottle(db, throttle),
      failureWindowSeconds: throttle.failureWindowSeconds,
    }),
    sso: new SsoService({
      db,
      objects,
      authz,
      authn,
      signer,
      sessionTtlSeconds,
      clientSecret: config['auth.oidc-client-secret'],
      keyring: deps.keyring,
    }),
    projectTokens: new ProjectTokensService({ db, authz, authn, signer }),
  };
}

/** What the other Capstan services call (appset's writes and inputs, sync's deliveries) and forwards to them. */
function internalUseCases(
  deps: UseCaseDeps,
  catalog: Catalog,
  ssoOwnerMaxAge: number,
): Pick<
  ApiServices,
  'generatedApplications' | 'generatorInputs' | 'setOwners' | 'deliveredObjects' | 'managedResources'
> {
  const { db, authz, authn, policy, delegations, deliverers } = deps.access;
  const { projects, applications, applicationSets, clusters } = catalog;
  return {
    generatedApplications: new GeneratedApplicationsService({ db, authz, policy, applications }),
    generatorInputs: new GeneratorInputsService({ db, authz, policy, clusters }),
    setOwners: new SetOwnersService({
      authz,
      authn,
      delegations,
      ssoOwner: (subject) => ownerStanding(db, subject, ssoOwnerMaxAge),
    }),
    deliveredObjects: new DeliveredObjectsService({
      db,
      authz,
      projects,
      applications,
      applicationSets,
      deliverers,
    }),
    managedResources: new ManagedResourcesService({ applications, backend: deps.peers.sync, authz }),
  };
}

/** A comma-separated setting as its entries. */
function list(s: string): string[] {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}
