export { appsetSettings } from './settings.js';
