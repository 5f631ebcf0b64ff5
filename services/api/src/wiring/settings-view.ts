// The api's own settings as `capstan admin settings` shows them, and which of them an operator pinned
// (a flag or the environment: an applied Argo CD object does not override those).
import { commonSettings, type ServiceContext } from '@capstan/service';
import type { ApiConfig } from '../api-service.js';
import { apiSettings } from '../settings.js';
import type { SettingsViewSource } from '../settings/settings-view.js';
import type { LiveApiSettings } from '../settings/live-api-settings.js';

/** Whether a flag or the environment gave `key`. */
export function pinnedBy(ctx: ServiceContext<ApiConfig>): (key: string) => boolean {
  return (key) => ['flag', 'env'].includes(ctx.configReport?.sources[key]?.kind ?? '');
}

/** The api's settings in force as the view reads them: read again before each answer. */
export function ownSettingsView(live: LiveApiSettings): SettingsViewSource {
  return {
    settings: { ...commonSettings, ...apiSettings },
    live: live.live,
    refresh: () => live.refresh(),
  };
}
