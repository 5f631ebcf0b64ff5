// emmett-style command handling over the event store: load the aggregate's events, fold them with a
// pure `evolve`, let a pure `decide` produce new events, append them with optimistic concurrency and
// update projections, all in one transaction. A lost race is retried from the start (fresh state),
// so a command is never applied twice and never applied to stale state.
import { ConcurrencyError } from '@capstan/service';
import type { Kysely, Transaction } from 'kysely';
import type { Envelope } from '../envelope/envelope.js';
import type { Catalog } from '../catalog/define.js';
import type { EventStoreDatabase } from './event-store.table.js';
import { appendToStream, appendToStreams, readStream, readStreams } from './event-store.repository.js';

export interface CommandHandlerOptions<State, E extends Envelope, DB = EventStoreDatabase> {
  schema: string;
  streamId: string;
  initialState: () => State;
  evolve: (state: State, event: E) => State;
  /** Pure: given the current state, the events to append (may throw a domain error to refuse). */
  decide: (state: State, version: number) => E[];
  /** Projections updated in the same transaction as the append. */
  project?: (trx: Transaction<DB>, events: readonly E[], state: State) => Promise<void>;
  catalog?: Catalog;
  maxAttempts?: number;
}

export interface CommandResult<State, E extends Envelope> {
  state: State;
  version: number;
  events: E[];
}

/** Retries `run` on a lost race (ConcurrencyError), up to `maxAttempts` times in all. */
async function retryingRaces<T>(label: string, maxAttempts: number, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < maxAttempts) continue;
      if (err instanceof ConcurrencyError) {
        throw new ConcurrencyError(`${label} kept changing: gave up after ${attempt} attempts, try again`, {
          cause: err,
        });
      }
      throw err;
    }
  }
}

export async function handleCommand<State, E extends Envelope, DB = EventStoreDatabase>(
  db: Kysely<DB>,
  options: CommandHandlerOptions<State, E, DB>,
): Promise<CommandResult<State, E>> {
  return retryingRaces(`aggregate ${options.streamId}`, options.maxAttempts ?? 5, () =>
    db.transaction().execute(async (trx) => {
      const history = await readStream(trx, options.schema, options.streamId);
      let state = options.initialState();
      for (const e of history) state = options.evolve(state, e.envelope as E);
      const version = history.at(-1)?.version ?? 0;
      const decided = options.decide(state, version);
      const stored = (await appendToStream(trx, {
        schema: options.schema,
        streamId: options.streamId,
        expectedVersion: version,
        events: decided,
        ...(options.catalog ? { catalog: options.catalog } : {}),
      })) as E[];
      for (const e of stored) state = options.evolve(state, e);
      await options.project?.(trx, stored, state);
      return { state, version: version + stored.length, events: stored };
    }),
  );
}

export interface BatchCommandOptions<State, E extends Envelope, DB = EventStoreDatabase> {
  schema: string;
  /** One command per aggregate (distinct streams), each decided on its own state. */
  commands: readonly { streamId: string; decide: (state: State, version: number) => E[] }[];
  initialState: () => State;
  evolve: (state: State, event: E) => State;
  /** Projections of every aggregate, in the same transaction as the append (results in command order). */
  project?: (trx: Transaction<DB>, results: readonly BatchResult<State, E>[]) => Promise<void>;
  catalog?: Catalog;
  maxAttempts?: number;
}

export interface BatchResult<State, E extends Envelope> extends CommandResult<State, E> {
  streamId: string;
}

/**
 * handleCommand for many aggregates of one kind, all or nothing in one transaction: the streams are
 * read in one query, each command is decided on its own aggregate's state, and the events and outbox
 * rows of all go in one append (appendToStreams). Each aggregate gets exactly the events its command
 * would get alone; a refusal of any command (decide throws) appends nothing at all, and a lost race
 * on any stream retries the whole batch from fresh state.
 */
export async function handleCommands<State, E extends Envelope, DB = EventStoreDatabase>(
  db: Kysely<DB>,
  options: BatchCommandOptions<State, E, DB>,
): Promise<BatchResult<State, E>[]> {
  const ids = options.commands.map((c) => c.streamId);
  if (new Set(ids).size !== ids.length) throw new Error('handleCommands: one command per stream');
  if (ids.length === 0) return [];
  return retryingRaces(`one of ${ids.length} aggregates`, options.maxAttempts ?? 5, () =>
    db.transaction().execute(async (trx) => {
      const histories = await readStreams(trx, options.schema, ids);
      const decided = options.commands.map((c) => {
        const history = histories.get(c.streamId) ?? [];
        let state = options.initialState();
        for (const e of history) state = options.evolve(state, e.envelope as E);
        const version = history.at(-1)?.version ?? 0;
        return { streamId: c.streamId, state, version, events: c.decide(state, version) };
      });
      const stored = (await appendToStreams(trx, {
        schema: options.schema,
        appends: decided.map((d) => ({ streamId: d.streamId, expectedVersion: d.version, events: d.events })),
        ...(options.catalog ? { catalog: options.catalog } : {}),
      })) as E[][];
      const results = decided.map((d, i) => {
        let state = d.state;
        for (const e of stored[i]!) state = options.evolve(state, e);
        return { streamId: d.streamId, state, version: d.version + stored[i]!.length, events: stored[i]! };
      });
      await options.project?.(trx, results);
      return results;
    }),
  );
}
