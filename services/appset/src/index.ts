// @capstan/appset: the appset service. Other packages talk to it over gRPC (capstan.appset.v1.AppSetService
// in @capstan/proto) and events; this entry point exports what tests and tools need to start it in-process.
export { appsetSettings } from './settings.js';
export { startAppset, type AppSetConfig, type AppSetHandles, type AppSetPorts } from './appset-service.js';
export { applyPolicy, deletePolicy, type ApplyPolicy } from './sets/sync-policy.js';
