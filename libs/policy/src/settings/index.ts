export * from './argo-keys.js';
export * from './argo-settings.js';
export * from './argo-objects.js';
