// What the api does on bus events: Argo CD Notifications (the notifier queues, the delivery sends),
// the sync service's status reports, and the syncs external sources ask for.
import type { Bus } from '@capstan/events';
import type { ServiceContext } from '@capstan/service';
import type { ApiConfig } from '../api-service.js';
import type { ApiServices } from '../services.js';
import type { Authorizer } from '../rbac/authorizer.js';
import { Notifier } from '../notifications/notifier.js';
import {
  DEFAULT_DELIVERY_OPTIONS,
  NotificationDelivery,
  type DeliveryOptions,
} from '../notifications/delivery.js';
import { startSyncStatusConsumer } from '../sync/sync-status.consumer.js';
import { parseExtAccounts, startExtSyncRequestConsumer } from '../sync/ext-sync-requests.consumer.js';

export async function startConsumers(
  ctx: ServiceContext<ApiConfig>,
  deps: {
    bus: Bus;
    services: ApiServices;
    authz: Authorizer;
    /** Delivery options on top of the notifications.* settings (tests: a shorter poll). */
    delivery?: Partial<DeliveryOptions> | undefined;
  },
): Promise<void> {
  const { bus, services, authz } = deps;
  const { db, applications, changes } = services;
  const logger = ctx.logger;
  const notifier = startNotifications(ctx, services, deps.delivery);
  const syncStatus = await startSyncStatusConsumer({ bus, db, applications, logger, changes, notifier });
  ctx.onShutdown('sync status consumer', () => syncStatus.stop());
  const extSync = await startExtSyncRequestConsumer({
    bus,
    db,
    authz,
    applications,
    accounts: parseExtAccounts(ctx.config['bus.ext-accounts']),
    logger,
  });
  ctx.onShutdown('external sync request consumer', () => extSync.stop());
}

/** The delivery of notifications (started) and the notifier that queues them for it. */
function startNotifications(
  ctx: ServiceContext<ApiConfig>,
  services: ApiServices,
  overrides: Partial<DeliveryOptions> | undefined,
): Notifier {
  const c = ctx.config;
  const delivery = new NotificationDelivery({
    db: services.db,
    settings: services.notifications,
    logger: ctx.logger,
    options: {
      ...DEFAULT_DELIVERY_OPTIONS,
      maxAttempts: c['notifications.max-attempts'],
      backoffMs: c['notifications.backoff-ms'],
      timeoutMs: c['notifications.timeout-ms'],
      render: {
        timeoutMs: c['notifications.template-timeout-ms'],
        maxBytes: c['notifications.template-max-bytes'],
      },
      ...overrides,
    },
  });
  delivery.start();
  ctx.onShutdown('notification delivery', () => delivery.stop());
  return new Notifier({
    db: services.db,
    settings: services.notifications,
    logger: ctx.logger,
    queued: () => delivery.wake(),
  });
}
