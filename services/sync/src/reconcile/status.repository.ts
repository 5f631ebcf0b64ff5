// The last published verdict per Application, and the publishing itself: a changed verdict's row
// and its `sync.status-changed` event (stream application-status/<ns>/<name>, through the outbox)
// commit together, many Applications per transaction.
import type { Transaction } from 'kysely';
import {
  appendToStreams,
  applicationSubject,
  newEvent,
  syncStatusChanged,
  type EventOf,
  type EventStoreDatabase,
} from '@capstan/events';
import type { SyncDb, SyncDbOrTrx } from '../sync.table.js';
import type { Verdict } from './verdict.js';

export interface PublishedStatus {
  version: number;
  fingerprint: string;
  sync: Verdict['sync']['status'];
  health: Verdict['health']['status'];
}

export const appKeyOf = (app: { namespace: string; name: string }) => `${app.namespace}/${app.name}`;

export function statusStream(app: { namespace: string; name: string }): string {
  return `application-status/${app.namespace}/${app.name}`;
}

export async function loadPublished(db: SyncDbOrTrx): Promise<Map<string, PublishedStatus>> {
  const rows = await db
    .withSchema('sync')
    .selectFrom('reconcile_status')
    .select(['app_namespace', 'app_name', 'version', 'fingerprint', 'sync_status', 'health_status'])
    .execute();
  return new Map(
    rows.map((r) => [
      appKeyOf({ namespace: r.app_namespace, name: r.app_name }),
      {
        version: r.version,
        fingerprint: r.fingerprint,
        sync: r.sync_status as PublishedStatus['sync'],
        health: r.health_status as PublishedStatus['health'],
      },
    ]),
  );
}

export interface StatusChange {
  app: { namespace: string; name: string };
  verdict: Verdict;
  fingerprint: string;
  previous: PublishedStatus | undefined;
  reconciledAt: Date;
}

type StatusData = EventOf<typeof syncStatusChanged>['data'];

/** Publishes the changes in one transaction; returns what is now on record per Application. */
export async function publishChanges(
  db: SyncDb,
  changes: readonly StatusChange[],
): Promise<PublishedStatus[]> {
  if (changes.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    const appends = [];
    const published: PublishedStatus[] = [];
    for (const c of changes) {
      const version = c.previous?.version ?? 0;
      const data: StatusData = {
        application: c.app,
        sync: c.verdict.sync,
        health: c.verdict.health,
        ...(c.verdict.message ? { message: c.verdict.message } : {}),
        resources: c.verdict.resources,
        ...(c.verdict.excluded ? { excluded: c.verdict.excluded } : {}),
        reconciledAt: c.reconciledAt.toISOString(),
        ...(c.previous ? { previous: { sync: c.previous.sync, health: c.previous.health } } : {}),
      };
      const event = newEvent(syncStatusChanged.type, data, {
        subject: applicationSubject(c.app.namespace, c.app.name),
        actor: 'service:sync',
        source: 'capstan/sync',
      });
      appends.push({ streamId: statusStream(c.app), expectedVersion: version, events: [event] });
      const row = {
        version: version + 1,
        fingerprint: c.fingerprint,
        sync_status: c.verdict.sync.status,
        health_status: c.verdict.health.status,
        reconciled_at: c.reconciledAt,
      };
      await trx
        .withSchema('sync')
        .insertInto('reconcile_status')
        .values({ app_namespace: c.app.namespace, app_name: c.app.name, ...row })
        .onConflict((oc) => oc.columns(['app_namespace', 'app_name']).doUpdateSet(row))
        .execute();
      published.push({
        version: version + 1,
        fingerprint: c.fingerprint,
        sync: c.verdict.sync.status,
        health: c.verdict.health.status,
      });
    }
    await appendToStreams(trx as unknown as Transaction<EventStoreDatabase>, { schema: 'sync', appends });
    return published;
  });
}

/** The Application is gone: its verdict with it (a new Application of that name starts afresh). */
export async function forgetPublished(
  db: SyncDbOrTrx,
  app: { namespace: string; name: string },
): Promise<void> {
  await db
    .withSchema('sync')
    .deleteFrom('reconcile_status')
    .where('app_namespace', '=', app.namespace)
    .where('app_name', '=', app.name)
    .execute();
}
