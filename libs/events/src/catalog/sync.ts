// Sync commands and events. The api publishes the request for `capstan app sync` (other systems may
// publish it too); the sync service owns everything that follows (add its lifecycle events here).
import { z } from 'zod';
import { defineEvent } from './define.js';

export const syncRequest = defineEvent({
  type: 'io.capstan.cmd.sync.request.v1',
  description: 'please sync this Application (subject applications/<namespace>/<name>)',
  data: z.object({
    /** Chosen by the requester; the sync's lifecycle events carry it, so the requester can follow it. */
    operationId: z.string().min(1).max(128),
    application: z.object({ name: z.string().min(1), namespace: z.string().min(1) }),
    project: z.string().min(1).optional(),
    /** Empty: the Application's targetRevision. */
    revision: z.string().optional(),
    dryRun: z.boolean().default(false),
    prune: z.boolean().default(false),
  }),
});

export const syncCommands = [syncRequest] as const;
