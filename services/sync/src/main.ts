// The sync service process: configuration, logger, ops endpoints and shutdown come from runService;
// everything else is wired in startSync.
import { runService } from '@capstan/service';
import { syncSettings } from './settings.js';
import { startSync } from './sync-service.js';

await runService({
  name: 'sync',
  settings: syncSettings,
  start: async (ctx) => {
    await startSync(ctx);
  },
});
