// Runs the ApplicationSet aggregate through the event store (handleCommand of @capstan/events:
// load, evolve, decide, append with optimistic concurrency, retried on a lost race) and keeps the
// projection in the same transaction. The domain speaks `{ type, data }`; this adds the CloudEvents
// envelope with the actor (the user the api's delegation names, or the set's owner) and correlation.
import { catalog, handleCommand, newEvent, type Envelope } from '@capstan/events';
import type { Kysely, Transaction } from 'kysely';
import { APPSET_SCHEMA } from '../migrations/index.js';
import {
  APPSET_CREATED,
  APPSET_UPDATED,
  decideAppSet,
  evolveAppSet,
  initialAppSetState,
  type AppSetCommand,
  type AppSetEvent,
  type AppSetState,
} from './appset.aggregate.js';
import type { AppSetDatabase } from './appset.table.js';
import { deleteProjection, updateStatusProjection, upsertProjection } from './appset.repository.js';
import { setStream } from './manifest.js';

export interface CommandMeta {
  actor: string;
  correlationId?: string;
}

/** Reconcile bookkeeping stored with a created/updated set. */
export interface SetInputs {
  gitRepos: readonly string[];
  readsClusters: boolean;
  requeueSeconds: number;
}

export interface AppSetWrite {
  state: AppSetState;
  version: number;
  events: AppSetEvent[];
}

export async function runAppSetCommand(
  db: Kysely<AppSetDatabase>,
  key: { namespace: string; name: string },
  command: AppSetCommand,
  meta: CommandMeta,
  inputs?: SetInputs,
): Promise<AppSetWrite> {
  const streamId = setStream(key);
  const result = await handleCommand<AppSetState, Envelope, AppSetDatabase>(db, {
    schema: APPSET_SCHEMA,
    streamId,
    catalog,
    initialState: initialAppSetState,
    evolve: (s, e) => evolveAppSet(s, e as unknown as AppSetEvent),
    decide: (s) =>
      decideAppSet(command, s).map((e) =>
        newEvent(e.type, e.data, {
          subject: streamId,
          actor: meta.actor,
          source: 'capstan/appset',
          ...(meta.correlationId ? { correlationId: meta.correlationId } : {}),
        }),
      ),
    project: (trx, events, state) => project(trx, key, events as unknown as AppSetEvent[], state, inputs),
  });
  return { state: result.state, version: result.version, events: result.events as unknown as AppSetEvent[] };
}

async function project(
  trx: Transaction<AppSetDatabase>,
  key: { namespace: string; name: string },
  events: readonly (AppSetEvent & { time?: string; sequence?: number })[],
  state: AppSetState,
  inputs: SetInputs | undefined,
): Promise<void> {
  const last = events.at(-1);
  if (!last) return;
  const at = last.time ? new Date(last.time) : new Date();
  const version = last.sequence ?? 0;
  if (state.set === undefined) return deleteProjection(trx, key);
  if (events.some((e) => e.type === APPSET_CREATED || e.type === APPSET_UPDATED)) {
    // created_at is written once (the upsert keeps it on conflict).
    return upsertProjection(trx, {
      set: state.set,
      uid: state.uid ?? '',
      status: state.status,
      version,
      createdAt: at,
      updatedAt: at,
      gitRepos: inputs?.gitRepos ?? [],
      readsClusters: inputs?.readsClusters ?? false,
      requeueSeconds: inputs?.requeueSeconds ?? 180,
    });
  }
  return updateStatusProjection(trx, key, state.status, version, at);
}
