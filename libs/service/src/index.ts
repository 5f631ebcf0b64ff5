export * from './errors/errors.js';
export * from './errors/status.js';
export * from './config/settings.js';
export * from './config/common.js';
export * from './observability/logger.js';
export * from './observability/http.js';
export * from './lifecycle/run-service.js';
export * from './config/live-settings.js';
export { nearestKey } from './config/file-keys.js';
