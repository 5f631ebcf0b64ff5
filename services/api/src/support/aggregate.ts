// Runs a pure decide/evolve pair through the event store (handleCommand from @capstan/events): the
// domain speaks `{ type, data }` events, this wraps them in CloudEvents envelopes with the actor and
// correlation id of the request, and keeps the projection in the same transaction.
import {
  handleCommand,
  handleCommands,
  newEvent,
  type BatchResult,
  type Envelope,
  type EventStoreDatabase,
} from '@capstan/events';
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

/** A command's domain events as CloudEvents of the request (actor, correlation id). */
const envelopesOf =
  (streamId: string, meta: CommandMeta) =>
  (events: readonly DomainEvent[]): Envelope[] =>
    events.map((e) =>
      newEvent(e.type, e.data, {
        subject: streamId,
        actor: meta.actor,
        source: 'capstan/api',
        ...(meta.correlationId ? { correlationId: meta.correlationId } : {}),
      }),
    );

/** The time of a write's last new event (now when there is none) and the version it produced. */
const stampOf = (events: readonly Envelope[]) => {
  const last = events.at(-1);
  return { at: last ? new Date(last.time) : new Date(), version: last?.sequence ?? 0 };
};

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
    decide: (s, v) => envelopesOf(options.streamId, options.meta)(options.decide(s, v)),
    project: async (trx, events, state) => {
      const { at, version } = stampOf(events);
      await options.project(
        trx as unknown as Transaction<ApiDatabase>,
        events as unknown as E[],
        state,
        version,
        at,
      );
    },
  });
  return { state: result.state, version: result.version, events: result.events as unknown as E[] };
}

/** One aggregate's part of runAggregates: its events and state after the write. */
export interface AggregateWrite<State, E extends DomainEvent> {
  streamId: string;
  state: State;
  version: number;
  events: E[];
  /** As runAggregate's `at`: the time of the last new event. */
  at: Date;
}

/**
 * runAggregate for many aggregates of one kind in one transaction (handleCommands): every command
 * decided on its own aggregate, all written or none, each aggregate with exactly the events, outbox
 * rows and projection it would get alone; `project` sees every aggregate at once, so projections can
 * be written in a few statements.
 */
export async function runAggregates<State, E extends DomainEvent>(
  db: Kysely<ApiDatabase>,
  options: {
    meta: CommandMeta;
    commands: readonly { streamId: string; decide: (state: State, version: number) => E[] }[];
    initial: () => State;
    evolve: (state: State, event: E) => State;
    project: (trx: Transaction<ApiDatabase>, writes: readonly AggregateWrite<State, E>[]) => Promise<void>;
  },
): Promise<AggregateWrite<State, E>[]> {
  const toWrite = (r: BatchResult<State, Envelope>): AggregateWrite<State, E> => ({
    streamId: r.streamId,
    state: r.state,
    version: r.version,
    events: r.events as unknown as E[],
    at: stampOf(r.events).at,
  });
  const results = await handleCommands<State, Envelope>(db as unknown as Kysely<EventStoreDatabase>, {
    schema: API_SCHEMA,
    commands: options.commands.map((c) => ({
      streamId: c.streamId,
      decide: (s, v) => envelopesOf(c.streamId, options.meta)(c.decide(s, v)),
    })),
    initialState: options.initial,
    evolve: (s, e) => options.evolve(s, e as unknown as E),
    project: (trx, written) =>
      options.project(trx as unknown as Transaction<ApiDatabase>, written.map(toWrite)),
  });
  return results.map(toWrite);
}
