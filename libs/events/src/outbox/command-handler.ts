// emmett-style command handling over the event store: load the aggregate's events, fold them with a
// pure `evolve`, let a pure `decide` produce new events, append them with optimistic concurrency and
// update projections, all in one transaction. A lost race is retried from the start (fresh state),
// so a command is never applied twice and never applied to stale state.
import { ConcurrencyError } from '@capstan/service';
import type { Kysely, Transaction } from 'kysely';
import type { Envelope } from '../envelope/envelope.js';
import type { Catalog } from '../catalog/define.js';
import type { EventStoreDatabase } from './event-store.table.js';
import { appendToStream, readStream } from './event-store.repository.js';

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

export async function handleCommand<State, E extends Envelope, DB = EventStoreDatabase>(
  db: Kysely<DB>,
  options: CommandHandlerOptions<State, E, DB>,
): Promise<CommandResult<State, E>> {
  const maxAttempts = options.maxAttempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
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
      });
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < maxAttempts) continue;
      if (err instanceof ConcurrencyError) {
        throw new ConcurrencyError(
          `aggregate ${options.streamId} kept changing: gave up after ${attempt} attempts, try again`,
          { cause: err },
        );
      }
      throw err;
    }
  }
}
