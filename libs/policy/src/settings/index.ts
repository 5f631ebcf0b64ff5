export * from './argo-keys.js';
export * from './argo-settings.js';
export * from './argo-objects.js';
export * from './resource-filter.js';
export { readOidcConfig, readScopes, type OidcConfig } from './oidc-config.js';
export * from './check-object.js';
