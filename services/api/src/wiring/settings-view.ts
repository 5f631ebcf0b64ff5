// The api's own settings as `capstan admin settings` shows them, and which of them an operator pinned
// (a flag or the environment: an applied Argo CD object does not override those).
import { commonSettings, type ServiceContext } from '@capstan/service';
import type { ApiConfig } from '../api-service.js';
import { apiSettings } from '../settings.js';
import type { SettingsViewSource } from '../settings/settings-view.js';

/** Whether a flag or the environment gave `key`. */
export function pinnedBy(ctx: ServiceContext<ApiConfig>): (key: string) => boolean {
  return (key) => ['flag', 'env'].includes(ctx.configReport?.sources[key]?.kind ?? '');
}

export function ownSettingsView(ctx: ServiceContext<ApiConfig>): SettingsViewSource {
  return {
    settings: { ...commonSettings, ...apiSettings },
    config: ctx.config,
    ...(ctx.configReport ? { report: ctx.configReport } : {}),
  };
}
