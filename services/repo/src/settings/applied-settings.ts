// Argo CD's configuration objects applied through the api, in the repo service: argocd-cm's
// kustomize.buildOptions and named kustomize versions (kustomize.path.<v>, kustomize.version.<v>,
// kustomize.buildOptions.<v>) take effect for the next render without restart, as Argo CD's repo
// server reads them per request; argocd-cmd-params-cm's reposerver.log.level sets the logger's level. Kept in repo.applied_settings by the shared consumer of
// @capstan/events (durable repo-settings); read at start, so what was applied while the service was
// down counts from its first render.
import type { Kysely } from 'kysely';
import { readAppliedSettings, startAppliedSettingsConsumer, type Bus } from '@capstan/events';
import {
  commonSettings,
  followLogLevel,
  LiveSettings,
  logLiveChange,
  type CommonConfig,
  type ConfigOf,
  type ServiceContext,
} from '@capstan/service';
import { repoSettings } from '../settings.js';

export const SETTINGS_CONSUMER = 'repo-settings';

type RepoConfig = ConfigOf<typeof repoSettings> & CommonConfig;

/** The settings in force: start-up configuration with the applied objects on top (flag and environment win). */
export async function liveRepoSettings<DB>(
  ctx: ServiceContext<RepoConfig>,
  db: Kysely<DB>,
): Promise<LiveSettings<RepoConfig>> {
  const live = new LiveSettings({ ...commonSettings, ...repoSettings }, ctx.config, ctx.configReport, 'repo');
  logLiveChange(ctx.logger, live.apply(await readAppliedSettings(db, 'repo')), live);
  live.onChange((change) => logLiveChange(ctx.logger, change, live));
  // reposerver.log.level applied: the logger's level at once.
  followLogLevel(ctx.logger, live);
  return live;
}

/** Follows io.capstan.settings.changed.v1 from now on. */
export async function followAppliedSettings<DB>(
  ctx: ServiceContext<RepoConfig>,
  db: Kysely<DB>,
  bus: Bus,
  live: LiveSettings<RepoConfig>,
): Promise<void> {
  const consumer = await startAppliedSettingsConsumer(bus, db, {
    schema: 'repo',
    durable: SETTINGS_CONSUMER,
    onApplied: (objects) => void live.apply(objects),
  });
  ctx.onShutdown('settings consumer', () => consumer.stop());
}
