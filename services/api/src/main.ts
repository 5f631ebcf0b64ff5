// The api service process: configuration, logger, ops endpoints and shutdown come from runService;
// everything else is wired in startApi. Start it with `node services/api/dist/main.js`
// (flags, CAPSTAN_* environment variables or --config file; see README).
import { runService } from '@capstan/service';
import { apiSettings } from './settings.js';
import { startApi } from './api-service.js';

await runService({
  name: 'api',
  settings: apiSettings,
  start: async (ctx) => {
    await startApi(ctx);
  },
});
