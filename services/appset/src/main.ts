// appset: owns ApplicationSets. This is the wiring only; generators, templates and RBAC checks live in
// their concept folders as they are built (see DESIGN.md, "ApplicationSet RBAC").
import { runService } from '@capstan/service';
import { startBackbone } from '@capstan/events';
import { appsetSettings } from './settings.js';

await runService({
  name: 'appset',
  settings: appsetSettings,
  start: async (ctx) => {
    await startBackbone(ctx, { schema: 'appset' });
  },
});
