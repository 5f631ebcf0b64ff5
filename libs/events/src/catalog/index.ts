// The event catalog: every event type Capstan publishes or accepts, one file per aggregate.
// To add a type: define it with defineEvent in catalog/<aggregate>.ts, export it, add it to the list
// below, then run `npm run gen:schemas -w @capstan/events` (a test fails while the JSON Schemas are stale).
import { createCatalog, type EventDefinition } from './define.js';

export const allEventDefinitions: readonly EventDefinition[] = [];

export const catalog = createCatalog(allEventDefinitions);
