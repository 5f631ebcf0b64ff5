// Wires the api service: the backbone (schema api, event store, outbox relay; the audit schema), the
// sealing keyring (every sealed row re-sealed with the active key), access control, the peers (repo,
// appset, sync) over mutual TLS with this service's identity, the use cases, the consumers of bus
// events, and both servers (gRPC, HTTP/JSON) of the same operations.
import type { Kysely } from 'kysely';
import { startBackbone, type Bus } from '@capstan/events';
import type { CommonConfig, ConfigOf, ServiceContext } from '@capstan/service';
import { loadKeyring, resealAtStartup, type Keyring } from '@capstan/sealing';
import { loadTls } from '@capstan/service-identity';
import type { apiSettings } from './settings.js';
import { API_SCHEMA, apiSchemaMigrations } from './migrations/index.js';
import type { ApiDatabase } from './support/db.table.js';
import type { ApiServices } from './services.js';
import { rebuildProjections } from './projections/rebuild.js';
import { sealedSigningKeys } from './auth/signing-key.js';
import { sealedSettingsSecrets } from './settings/settings-secrets.js';
import { sealedClusterCredentials } from './clusters/cluster.repository.js';
import { connectPeers } from './peers.js';
import { bootstrapAdminAccount } from './accounts/initial-admin-password.js';
import type { WebhookSettings } from './webhooks/webhook-config.js';
import type { DeliveryOptions } from './notifications/delivery.js';
import { startAccessControl } from './wiring/access-control.js';
import { createServices } from './wiring/use-cases.js';
import { startConsumers } from './wiring/consumers.js';
import { startServers } from './wiring/servers.js';

export type ApiConfig = ConfigOf<typeof apiSettings> & CommonConfig;

/** Bounds a test may set beyond the settings' ranges (a shorter delivery poll, a slower webhook refill). */
export interface ApiPorts {
  notifications?: Partial<DeliveryOptions>;
  webhook?: Partial<WebhookSettings>;
}

export interface ApiHandles {
  grpcPort: number;
  httpPort: number;
  services: ApiServices;
  bus: Bus;
  /** Publishes everything in the outbox now (tests). */
  flushOutbox(): Promise<number>;
}

export async function startApi(ctx: ServiceContext<ApiConfig>, ports: ApiPorts = {}): Promise<ApiHandles> {
  const config = ctx.config;
  // Database (api and audit schemas migrated; --migrate-only stops here), bus and outbox relay.
  const backbone = await startBackbone<ApiDatabase>(ctx, {
    schema: API_SCHEMA,
    migrations: apiSchemaMigrations,
  });
  // The backbone's handle also types the event store tables (ApiDatabase includes them).
  const db = backbone.db as unknown as Kysely<ApiDatabase>;
  const tls = loadTls(config);
  const keyring = await loadApiKeyring(config);
  if (config['projections.rebuild'])
    ctx.logger.info(await rebuildProjections(db), 'rebuilt projections from the event store');
  // Key rotation: every sealed row of the api (cluster credentials, the generated token signing and
  // delegation keys, applied webhook secrets) still sealed with another key is re-sealed with the active one.
  await resealAtStartup(
    db,
    keyring,
    [sealedClusterCredentials, sealedSigningKeys, sealedSettingsSecrets],
    ctx.logger,
  );
  const access = await startAccessControl(ctx, db, keyring);
  const peers = connectPeers(config, tls, access.delegations, ctx.onShutdown);
  const services = createServices(ctx, { access, peers, keyring, webhook: ports.webhook });
  await services.liveSettings.start();
  ctx.onShutdown('live settings', () => services.liveSettings.stop());
  await bootstrapAdminAccount(
    services.accounts,
    {
      adminPassword: config['auth.admin-password'],
      initialAdminPasswordFile: config['auth.initial-admin-password-file'],
    },
    ctx.logger,
  );
  await startConsumers(ctx, {
    bus: backbone.bus,
    services,
    authz: access.authz,
    delivery: ports.notifications,
  });
  const { grpcPort, httpPort } = await startServers(ctx, services, tls);
  return { grpcPort, httpPort, services, bus: backbone.bus, flushOutbox: () => backbone.relay.flush() };
}

/** The sealing keyring (encryption.keys, or the file encryption.key-file names). */
function loadApiKeyring(config: ApiConfig): Promise<Keyring> {
  return loadKeyring(
    { value: config['encryption.keys'], file: config['encryption.key-file'] },
    { value: 'encryption.keys', file: 'encryption.key-file', env: 'CAPSTAN_API_ENCRYPTION_KEYS' },
  );
}
