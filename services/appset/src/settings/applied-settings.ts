// Argo CD's configuration objects applied through the api, in the appset service: kept in
// appset.applied_settings by the shared consumer of @capstan/events (durable appset-settings) and
// handed to LiveSettings, as the repo and sync services do. Of Argo's keys the appset service takes
// argocd-cmd-params-cm's applicationsetcontroller.log.level: the logger's level changes at once (and
// at start, when it was applied while the service was down). `capstan admin settings` shows the
// settings in force from it.
import type { Kysely } from 'kysely';
import { readAppliedSettings, startAppliedSettingsConsumer, type Bus } from '@capstan/events';
import {
  commonSettings,
  followLogLevel,
  LiveSettings,
  logLiveChange,
  type ServiceContext,
} from '@capstan/service';
import { appsetSettings } from '../settings.js';
import type { AppSetConfig } from '../appset-service.js';

export const SETTINGS_CONSUMER = 'appset-settings';

/** The settings in force, read at start; then follows io.capstan.settings.changed.v1. */
export async function followAppsetSettings<DB>(
  ctx: ServiceContext<AppSetConfig>,
  db: Kysely<DB>,
  bus: Bus,
): Promise<LiveSettings<AppSetConfig>> {
  const live = new LiveSettings(
    { ...commonSettings, ...appsetSettings },
    ctx.config,
    ctx.configReport,
    'appset',
  );
  logLiveChange(ctx.logger, live.apply(await readAppliedSettings(db, 'appset')), live);
  live.onChange((change) => logLiveChange(ctx.logger, change, live));
  followLogLevel(ctx.logger, live);
  const consumer = await startAppliedSettingsConsumer(bus, db, {
    schema: 'appset',
    durable: SETTINGS_CONSUMER,
    onApplied: (objects) => void live.apply(objects),
  });
  ctx.onShutdown('settings consumer', () => consumer.stop());
  return live;
}
