// What makes a set due at once: a git push (io.capstan.ext.git.push.v1, published by git servers and
// CI) or a new revision of a watched source (io.capstan.repository.revision-changed.v1, the repo
// service's) for a repository a set's git generators read, and any change of the api's cluster
// registry for sets with a clusters generator. Durable consumers; each event's effect (marking the
// sets due) and its (consumer, event id) record commit together, so a redelivery changes nothing.
import {
  applyOnce,
  assertNever,
  clusterRegistered,
  clusterRemoved,
  clusterUpdated,
  gitPush,
  repositoryRevisionChanged,
  type Bus,
  type DeadLetterStore,
  type EventOf,
  type RunningConsumer,
} from '@capstan/events';
import { normalizeRepoUrl } from '@capstan/policy';
import type { Kysely } from 'kysely';
import { APPSET_SCHEMA } from '../migrations/index.js';
import type { AppSetDatabase } from '../sets/appset.table.js';
import { markDue } from '../sets/appset.repository.js';

export const GIT_PUSH_CONSUMER = 'appset-git-push';
export const TRIGGERS_CONSUMER = 'appset-triggers';

const evtDefinitions = [
  repositoryRevisionChanged,
  clusterRegistered,
  clusterUpdated,
  clusterRemoved,
] as const;
type TriggerEvent = EventOf<(typeof evtDefinitions)[number] | typeof gitPush>;

/** Marks the sets the event concerns as due; returns how many (after applyOnce: 0 on a redelivery). */
export async function applyTrigger(
  db: Kysely<AppSetDatabase>,
  consumer: string,
  event: TriggerEvent,
): Promise<number> {
  let marked = 0;
  await applyOnce(db, { schema: APPSET_SCHEMA, consumer, eventId: event.id }, async (trx) => {
    switch (event.type) {
      case gitPush.type:
      case repositoryRevisionChanged.type:
        marked = await markDue(trx, { repos: [normalizeRepoUrl(event.data.repoURL)] });
        break;
      case clusterRegistered.type:
      case clusterUpdated.type:
      case clusterRemoved.type:
        marked = await markDue(trx, { clusters: true });
        break;
      default:
        assertNever(event);
    }
  });
  return marked;
}

export async function startTriggerConsumers(
  db: Kysely<AppSetDatabase>,
  bus: Bus,
  opts: { onDue: () => void; deadLetters?: DeadLetterStore },
): Promise<RunningConsumer[]> {
  const handle = (consumer: string) => async (event: TriggerEvent) => {
    if ((await applyTrigger(db, consumer, event)) > 0) opts.onDue();
  };
  const dl = opts.deadLetters ? { deadLetters: opts.deadLetters } : {};
  return Promise.all([
    bus.consume({
      durable: GIT_PUSH_CONSUMER,
      events: [gitPush],
      handle: handle(GIT_PUSH_CONSUMER),
      ...dl,
    }),
    bus.consume({
      durable: TRIGGERS_CONSUMER,
      events: evtDefinitions,
      handle: handle(TRIGGERS_CONSUMER),
      ...dl,
    }),
  ]);
}
