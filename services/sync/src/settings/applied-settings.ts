// Argo CD's configuration objects applied through the api, in the sync service: kept in
// sync.applied_settings by the shared consumer of @capstan/events (durable sync-settings) and handed
// to LiveSettings, so application.sync.impersonation.enabled, timeout.reconciliation and
// resource.customizations take effect for the next decision without restart.
export const SETTINGS_CONSUMER = 'sync-settings';
