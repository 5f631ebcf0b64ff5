// Runs a pure decide/evolve pair through the event store (handleCommand from @capstan/events): the
// domain speaks `{ type, data }` events, this wraps them in CloudEvents envelopes with the actor and
// correlation id of the request, and keeps the projection in the same transaction.
import { handleCommand, newEvent, type Envelope, type EventStoreDatabase } from '@capstan/events';
import type { Kysely, Transaction } from 'kysely';
import { API_SCHEMA } from '../migrations/index.js';
import type { ApiDatabase } from './db.table.js';

export interface DomainEvent {
  type: string;
  data: unknown;
}

export interface CommandMeta {
  actor: string;
  correlationId?: string | undefined;
}

export async function runAggregate<State, E extends DomainEvent>(
  db: Kysely<ApiDatabase>,
  options: {
    streamId: string;
    meta: CommandMeta;
    initial: () => State;
    evolve: (state: State, event: E) => State;
    decide: (state: State, version: number) => E[];
    /** `at` is the time of the last new event, so a rebuilt projection has the same timestamps. */
    project: (
      trx: Transaction<ApiDatabase>,
      events: readonly E[],
      state: State,
      version: number,
      at: Date,
    ) => Promise<void>;
  },
): Promise<{ state: State; version: number; events: E[] }> {
  const result = await handleCommand<State, Envelope>(db as unknown as Kysely<EventStoreDatabase>, {
    schema: API_SCHEMA,
    streamId: options.streamId,
    initialState: options.initial,
    evolve: (s, e) => options.evolve(s, e as unknown as E),
    decide: (s, v) =>
      options.decide(s, v).map((e) =>
        newEvent(e.type, e.data, {
          subject: options.streamId,
          actor: options.meta.actor,
          source: 'capstan/api',
          ...(options.meta.correlationId ? { correlationId: options.meta.correlationId } : {}),
        }),
      ),
    project: async (trx, events, state) => {
      const last = events.at(-1);
      const at = last ? new Date(last.time) : new Date();
      await options.project(
        trx as unknown as Transaction<ApiDatabase>,
        events as unknown as E[],
        state,
        last?.sequence ?? 0,
        at,
      );
    },
  });
  return { state: result.state, version: result.version, events: result.events as unknown as E[] };
}
