// @capstan/api: the api service. Other packages start it in-process for end-to-end tests and
// benchmarks (startApi); the service itself runs from main.ts.
export { startApi, type ApiConfig, type RunningApi } from './api.js';
export { apiSettings } from './settings.js';
export { rebuildProjections, type RebuildResult } from './projections/rebuild.js';
// The UI's typed client is generated from this document at the UI's build (ui/scripts/generate-client.ts).
export { openApiDocument } from './transport/openapi.js';
