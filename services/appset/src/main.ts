// The appset service process: configuration, logger, ops endpoints and shutdown come from runService;
// everything else is wired in startAppset.
import { runService } from '@capstan/service';
import { appsetSettings } from './settings.js';
import { startAppset } from './appset-service.js';

await runService({
  name: 'appset',
  settings: appsetSettings,
  start: async (ctx) => {
    await startAppset(ctx);
  },
});
