export * from './argo-keys.js';
export * from './argo-settings.js';
export * from './argo-objects.js';
export * from './resource-filter.js';
