// @capstan/api: the api service. Other packages may start it in-process (startApi, through
// startService of @capstan/service, as main.ts does through runService).
export { startApi, type ApiConfig, type ApiHandles, type ApiPorts } from './api-service.js';
export { apiSettings } from './settings.js';
export { rebuildProjections, type RebuildResult } from './projections/rebuild.js';
// The UI's typed client is generated from this document at the UI's build (ui/scripts/generate-client.ts).
export { openApiDocument } from './transport/openapi.js';
