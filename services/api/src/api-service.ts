// The api service as runService starts it, the same way as the other three: the backbone (database
// migrated, bus, outbox relay) from startBackbone, then startApi with the settings read into ApiConfig.
import { readFileSync } from 'node:fs';
import { startBackbone } from '@capstan/events';
import { commonSettings, type CommonConfig, type ConfigOf, type ServiceContext } from '@capstan/service';
import { loadTls } from '@capstan/service-identity';
import type { Kysely } from 'kysely';
import { startApi, type ApiConfig, type RunningApi } from './api.js';
import { API_SCHEMA, apiSchemaMigrations } from './migrations/index.js';
import { apiSettings, webhookSettings } from './settings.js';
import type { WebhookSettings } from './webhooks/webhook-config.js';
import type { ApiDatabase } from './support/db.table.js';

export type ApiSettingsConfig = ConfigOf<typeof apiSettings> & CommonConfig;

const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** The settings (flags, environment, file) as startApi's configuration. */
export function apiConfigOf(c: ApiSettingsConfig): Omit<ApiConfig, 'backbone' | 'metrics'> {
  return {
    databaseUrl: c['database.url'],
    natsUrl: c['nats.url'],
    busNamespace: c['bus.namespace'],
    grpcHost: c['grpc.host'],
    grpcPort: c['grpc.port'],
    httpHost: c['api.http.host'],
    httpPort: c['api.http.port'],
    bodyLimit: c['api.body-limit'],
    uiDir: c['api.ui.dir'],
    inputLimits: {
      maxDepth: c['api.input.max-depth'],
      maxStringLength: c['api.input.max-string-length'],
      maxEntries: c['api.input.max-entries'],
    },
    policyFile: c['rbac.policy-file'],
    policyCsv: c['rbac.policy-csv'],
    defaultRole: c['rbac.default-role'],
    sessionTtlSeconds: c['auth.session-ttl-seconds'],
    loginThrottle: {
      maxFailCount: c['auth.login.max-fail-count'],
      maxFailCountPerAddress: c['auth.login.max-fail-count-per-address'],
      failureWindowSeconds: c['auth.login.failure-window-seconds'],
      maxCacheSize: c['auth.login.max-cache-size'],
    },
    signingKey: c['auth.signing-key'],
    adminPassword: c['auth.admin-password'],
    oidcClientSecret: c['auth.oidc-client-secret'],
    initialAdminPasswordFile: c['auth.initial-admin-password-file'],
    serviceTokens: c['auth.service-tokens'],
    credentialReaders: list(c['auth.credential-readers']),
    delegationKey:
      c['auth.delegation-key'] ||
      (c['auth.delegation-key-file'] ? readFileSync(c['auth.delegation-key-file'], 'utf8') : ''),
    delegationTtlSeconds: c['auth.delegation-ttl-seconds'],
    tls: loadTls(c),
    encryptionKeys: c['encryption.keys'],
    encryptionKeyFile: c['encryption.key-file'],
    repoAddress: c['repo.address'],
    repoServiceToken: c['repo.service-token'],
    appsetAddress: c['appset.address'],
    controlNamespace: c['api.control-namespace'],
    appsetServiceToken: c['appset.service-token'],
    syncAddress: c['sync.address'],
    syncServiceToken: c['sync.service-token'],
    rebuildProjections: c['projections.rebuild'],
    extAccounts: c['bus.ext-accounts'],
    notifications: {
      maxAttempts: c['notifications.max-attempts'],
      backoffMs: c['notifications.backoff-ms'],
      timeoutMs: c['notifications.timeout-ms'],
      render: {
        timeoutMs: c['notifications.template-timeout-ms'],
        maxBytes: c['notifications.template-max-bytes'],
      },
    },
  };
}

/** The webhook.* settings; those a flag or the environment gave are pinned against applied objects. */
function webhookConfigOf(ctx: ServiceContext<ApiSettingsConfig>): Partial<WebhookSettings> {
  const c = ctx.config;
  const sources = ctx.configReport?.sources ?? {};
  const pinned = Object.keys(webhookSettings).filter((k) => ['flag', 'env'].includes(sources[k]?.kind ?? ''));
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
    pinned: new Set(pinned),
    ratePerAddress: c['webhook.rate-limit.per-address'],
    burst: c['webhook.rate-limit.burst'],
    perRepositoryPerMinute: c['webhook.rate-limit.per-repository'],
    maxInFlight: c['webhook.max-in-flight'],
  };
}

export async function startApiService(ctx: ServiceContext<ApiSettingsConfig>): Promise<RunningApi> {
  // Database (api and audit schemas migrated; --migrate-only stops here), bus and outbox relay.
  const backbone = await startBackbone<ApiDatabase>(ctx, {
    schema: API_SCHEMA,
    migrations: apiSchemaMigrations,
  });
  return startApi(
    {
      ...apiConfigOf(ctx.config),
      webhook: webhookConfigOf(ctx),
      settings: {
        strict: ctx.config['settings.strict'],
        view: {
          settings: { ...commonSettings, ...apiSettings },
          config: ctx.config,
          ...(ctx.configReport ? { report: ctx.configReport } : {}),
        },
      },
      metrics: ctx.metrics,
      backbone: {
        db: backbone.db as unknown as Kysely<ApiDatabase>,
        bus: backbone.bus,
        relay: backbone.relay,
      },
    },
    ctx.logger,
    ctx.onShutdown,
  );
}
