// A tiny aggregate used by the backbone's own tests: a counter that can be incremented, with a
// catalog of its own so tests do not depend on the product's event types.
import { z } from 'zod';
import { createCatalog, defineEvent, type EventOf } from '../catalog/define.js';
import { newEvent } from '../envelope/envelope.js';

export const counterIncremented = defineEvent({
  type: 'io.capstan.counter.incremented.v1',
  description: 'test aggregate',
  data: z.object({ by: z.number().int().positive() }),
});
export const counterReset = defineEvent({
  type: 'io.capstan.counter.reset.v1',
  description: 'test aggregate',
  data: z.object({ to: z.number().int() }),
});
export const counterPing = defineEvent({
  type: 'io.capstan.cmd.counter.ping.v1',
  description: 'test command',
  data: z.object({ n: z.number().int() }),
});
export type CounterIncremented = EventOf<typeof counterIncremented>;
export const testCatalog = createCatalog([counterIncremented, counterReset, counterPing]);

export const increment = (streamId: string, by = 1, actor = 'user:test'): CounterIncremented =>
  newEvent(counterIncremented.type, { by }, { subject: streamId, actor, source: 'capstan/test' });
