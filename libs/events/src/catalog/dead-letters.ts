// Dead letters: what a consumer gave up on is recorded by the consuming service in its own schema
// (`<schema>.dead_letters`, consumers/dead-letters.ts). An operator replays one through the api
// (`capstan admin dlq replay <service>:<id>`): the api, after its RBAC check, commands the owning
// service, which hands the recorded message to the same consumer again and records the outcome.
import { z } from 'zod';
import { defineEvent } from './define.js';

/** The services that own a dead-letter table (each in its own schema of the same name). */
export const deadLetterOwners = ['api', 'sync', 'repo', 'appset'] as const;
export type DeadLetterOwner = (typeof deadLetterOwners)[number];

export const deadLetterReplay = defineEvent({
  type: 'io.capstan.cmd.deadletter.replay.v1',
  description:
    "replay one dead letter: the owning service hands the recorded message to its consumer again and records the outcome on the dead letter's row (published by the api for an admin)",
  public: false,
  data: z.strictObject({
    service: z.enum(deadLetterOwners),
    /** The row's id in the owning service's `dead_letters`. */
    id: z.number().int().positive(),
  }),
});

export const deadLetterCommands = [deadLetterReplay] as const;
