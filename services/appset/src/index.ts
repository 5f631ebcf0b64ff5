export { appsetSettings } from './settings.js';
export { startAppset } from './appset-service.js';
