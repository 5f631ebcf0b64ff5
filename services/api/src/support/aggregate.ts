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

/** Thrown out of decide to leave handleCommand's transaction without appending (dry run). */
class DryRunComplete extends Error {
  constructor(
    readonly events: DomainEvent[],
    readonly version: number,
  ) {
    super('dry run');
  }
}

/** What a write did, or (dry run) would do. */
export type WriteOutcome = 'created' | 'configured' | 'unchanged';

export function outcomeOf(events: readonly DomainEvent[], createdType: string): WriteOutcome {
  if (events.length === 0) return 'unchanged';
  return events.some((e) => e.type === createdType) ? 'created' : 'configured';
}

export async function runAggregate<State, E extends DomainEvent>(
  db: Kysely<ApiDatabase>,
  options: {
    /** Load and decide exactly as a write does (every invariant checked), then append nothing. */
    dryRun?: boolean;
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
  if (options.dryRun) {
    try {
      await runAggregate(db, {
        ...options,
        dryRun: false,
        decide: (state, version) => {
          throw new DryRunComplete(options.decide(state, version), version);
        },
      });
    } catch (err) {
      if (!(err instanceof DryRunComplete)) throw err;
      return { state: options.initial(), version: err.version, events: err.events as E[] };
    }
    throw new Error('unreachable: a dry run always ends in decide');
  }
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
