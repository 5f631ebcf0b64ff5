// The event catalog: every event type Capstan publishes or accepts, one file per aggregate.
// To add a type: define it with defineEvent in catalog/<aggregate>.ts, export it, add it to the list
// below, then run `npm run gen:schemas -w @capstan/events` (a test fails while the JSON Schemas are stale).
import { createCatalog, type EventDefinition } from './define.js';
import { projectEvents } from './project.js';
import { applicationEvents } from './application.js';
import { clusterEvents } from './cluster.js';
import { syncCommands, syncEvents } from './sync.js';
import { repositoryEvents } from './repository.js';
import { applicationSetEvents } from './applicationset.js';
import { settingsEvents } from './settings.js';
import { deadLetterCommands } from './dead-letters.js';

export * from './project.js';
export * from './application.js';
export * from './cluster.js';
export * from './sync.js';
export * from './repository.js';
export * from './applicationset.js';
export * from './settings.js';
export * from './dead-letters.js';

export const allEventDefinitions: readonly EventDefinition[] = [
  ...projectEvents,
  ...applicationEvents,
  ...clusterEvents,
  ...syncCommands,
  ...syncEvents,
  ...repositoryEvents,
  ...applicationSetEvents,
  ...settingsEvents,
  ...deadLetterCommands,
];

export const catalog = createCatalog(allEventDefinitions);
