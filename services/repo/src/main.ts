// The repo service process: configuration, logger, ops endpoints and shutdown come from
// runService; everything else is wired in startRepo.
import { runService } from '@capstan/service';
import { repoSettings } from './settings.js';
import { startRepo } from './repo-service.js';

await runService({
  name: 'repo',
  settings: repoSettings,
  start: async (ctx) => {
    await startRepo(ctx);
  },
});
