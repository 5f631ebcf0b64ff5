// The api learns how its sync requests went from the sync service's lifecycle events (the sync
// service owns them: io.capstan.sync.<event>.v<N>) and keeps the operation and the Application's
// status in its projection. Applied once per event (redelivery changes nothing). The events'
// fields are read defensively: operationId is required, the rest is taken when present.
import { applyOnce, catalog, type Bus, type Envelope, type RunningConsumer } from '@capstan/events';
import type { Logger } from '@capstan/service';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { z } from 'zod';
import type { ApiDatabase } from '../support/db.table.js';
import { API_SCHEMA } from '../migrations/index.js';

const DURABLE = 'api-sync-status';

const common = z.looseObject({
  operationId: z.string().min(1),
  message: z.string().optional(),
  reason: z.string().optional(),
  revision: z.string().optional(),
  username: z.string().nullable().optional(),
  identity: z.string().nullable().optional(),
  impersonation: z.boolean().optional(),
  impersonated: z.boolean().optional(),
  resource: z.looseObject({}).optional(),
  resources: z.array(z.looseObject({})).optional(),
});

/** The operation phase an event moves to, from its type's event name. */
export function phaseOf(type: string): string | undefined {
  const event = /^io\.capstan\.sync\.([a-z0-9-]+)\.v\d+$/.exec(type)?.[1];
  if (!event) return undefined;
  if (event === 'started' || event === 'decided') return 'Running';
  if (event === 'succeeded' || event === 'completed') return 'Succeeded';
  if (event === 'failed' || event === 'errored') return 'Failed';
  if (event === 'denied' || event === 'refused') return 'Denied';
  return undefined;
}

export async function applySyncEvent(db: Kysely<ApiDatabase>, event: Envelope): Promise<void> {
  const parsed = common.safeParse(event.data);
  if (!parsed.success) return;
  const d = parsed.data;
  const phase = phaseOf(event.type);
  const at = new Date(event.time);
  await applyOnce(db, { schema: API_SCHEMA, consumer: DURABLE, eventId: event.id }, async (trx) => {
    const op = await trx.withSchema('api').selectFrom('sync_operations').selectAll().where('id', '=', d.operationId).executeTakeFirst();
    if (!op) return;
    const identity = d.username ?? d.identity ?? undefined;
    const newResources = [...(d.resource ? [d.resource] : []), ...(d.resources ?? [])];
    const terminal = phase === 'Succeeded' || phase === 'Failed' || phase === 'Denied';
    // A late non-terminal event never moves a finished operation back.
    const finished = op.finished_at !== null;
    await trx
      .withSchema('api')
      .updateTable('sync_operations')
      .set({
        ...(phase && !finished ? { phase } : {}),
        ...(d.message ?? d.reason ? { message: (d.message ?? d.reason)! } : {}),
        ...(d.revision ? { revision: d.revision } : {}),
        ...(identity ? { identity } : {}),
        ...(d.impersonation ?? d.impersonated) !== undefined ? { impersonated: (d.impersonation ?? d.impersonated)! } : {},
        ...(phase === 'Running' && !op.started_at ? { started_at: at } : {}),
        ...(terminal && !finished ? { finished_at: at } : {}),
        ...(newResources.length > 0 ? { resources: sql`resources || ${JSON.stringify(newResources)}::jsonb` } : {}),
      })
      .where('id', '=', d.operationId)
      .execute();
    if (terminal && !finished && !op.dry_run) {
      await trx
        .withSchema('api')
        .updateTable('applications')
        .set({
          sync_status: phase === 'Succeeded' ? 'Synced' : 'OutOfSync',
          ...(phase === 'Succeeded' ? { health_status: 'Healthy' } : {}),
          ...(d.revision ? { revision: d.revision } : {}),
          reconciled_at: at,
        })
        .where('namespace', '=', op.app_namespace)
        .where('name', '=', op.app_name)
        .execute();
    }
  });
}

export async function startSyncStatusConsumer(opts: { bus: Bus; db: Kysely<ApiDatabase>; logger: Logger }): Promise<{ stop(): Promise<void> }> {
  const types = [...catalog.definitions.keys()].filter((t) => /^io\.capstan\.sync\./.test(t));
  if (types.length === 0) {
    opts.logger.warn('no sync lifecycle events in the catalog yet: sync operations stay Pending');
    return { stop: async () => undefined };
  }
  const consumer: RunningConsumer = await opts.bus.consume({
    durable: DURABLE,
    types,
    handle: (event) => applySyncEvent(opts.db, event),
    onError: (err, info) => opts.logger.warn({ err, ...info }, 'sync status event not applied'),
  });
  return { stop: () => consumer.stop() };
}
