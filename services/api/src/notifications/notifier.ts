// Argo CD Notifications' controller, driven by the events the api's sync-status consumer applies
// (sync started, succeeded, failed; the reconciler's verdicts): after the projection has taken the
// event, the Application's Argo view (transport/views.ts applicationView, with its last operation) is
// evaluated against every trigger it subscribes to (notifications.argoproj.io/subscribe.<trigger>.
// <service> annotations). As in Argo CD, a condition that is true is notified once per destination
// and oncePer value; one without oncePer is forgotten when it turns false, so it notifies again the
// next time it turns true (the next operation). What was notified is kept in api.notification_state;
// each notification to send is a row of api.notification_deliveries, written in the same transaction
// (applyOnce: a redelivered event adds nothing) and sent by the delivery worker outside it.
import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { applyOnce } from '@capstan/events';
import type { Logger } from '@capstan/service';
import {
  defaultSubscriptionsFor,
  subscriptionsOf,
  type NotificationsConfig,
  type TriggerCondition,
} from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import { API_SCHEMA } from '../migrations/index.js';
import { findApplication } from '../applications/application.repository.js';
import { syncHistory } from '../applications/sync-operation.repository.js';
import { applicationView } from '../transport/views.js';
import type { SyncStatusEvent } from '../sync/sync-status.consumer.js';
import type { ReconciledStatusEvent } from '../sync/reconciled-status.consumer.js';
import type { NotificationsSettings } from './notifications-config.js';

/** The key of applyOnce's record. */
const APPLIED_AS = 'api-notifications';

/** The events the notifier evaluates: those the api's sync-status consumer applies, typed by the catalog. */
export type NotifierEvent = SyncStatusEvent | ReconciledStatusEvent;

const lookup = (o: unknown, path: string): unknown =>
  path
    .replace(/\?/g, '')
    .split('.')
    .reduce<unknown>(
      (v, p) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined),
      o,
    );

/** Argo's state key of one condition of a trigger (its index, its expression, its oncePer value). */
export function conditionKey(i: number, c: TriggerCondition, vars: unknown): string {
  const hash = createHash('sha256').update(c.when.source).digest('hex').slice(0, 12);
  const key = `[${i}].${hash}`;
  if (!c.oncePer) return key;
  const once = lookup(vars, c.oncePer);
  return `${key}:${once === undefined || once === null ? '' : String(once)}`;
}

interface Planned {
  trigger: string;
  templates: string[];
  service: string;
  recipient: string;
  key: string;
  triggered: boolean;
  keep: boolean;
}

/** Destinations one Application may have (annotations are the tenant's: a bound on what one event sends). */
export const MAX_DESTINATIONS = 50;

/**
 * What every subscription's conditions say about `vars` (pure): the Application's annotations, and
 * the default subscriptions (the cm's `subscriptions`) whose selector matches its labels.
 */
export function plan(
  config: NotificationsConfig,
  metadata: { annotations?: Record<string, string> | undefined; labels?: Record<string, string> | undefined },
  vars: Record<string, unknown>,
  warn: (message: string) => void,
): Planned[] {
  const out: Planned[] = [];
  const seen = new Set<string>();
  const destinations = new Set<string>();
  const subs = [
    ...subscriptionsOf(metadata.annotations),
    ...defaultSubscriptionsFor(config, metadata.labels),
  ];
  for (const sub of subs) {
    const conditions = config.triggers.get(sub.trigger);
    if (!conditions || !config.services.has(sub.service)) {
      warn(`subscription ${sub.trigger}.${sub.service}: no such ${conditions ? 'service' : 'trigger'}`);
      continue;
    }
    const recipients = sub.recipients.length > 0 ? sub.recipients : [''];
    conditions.forEach((c, i) => {
      const triggered = c.when.evaluate(vars);
      const cond = conditionKey(i, c, vars);
      for (const recipient of recipients) {
        const key = `${sub.trigger}:${cond}:${sub.service}:${recipient}`;
        const destination = `${sub.service}:${recipient}`;
        if (seen.has(key)) continue;
        if (!destinations.has(destination) && destinations.size >= MAX_DESTINATIONS) {
          warn(`more than ${MAX_DESTINATIONS} destinations: ${destination} ignored`);
          continue;
        }
        seen.add(key);
        destinations.add(destination);
        out.push({
          trigger: sub.trigger,
          templates: c.send,
          service: sub.service,
          recipient,
          key,
          triggered,
          keep: c.oncePer !== undefined,
        });
      }
    });
  }
  return out;
}

export class Notifier {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      settings: NotificationsSettings;
      logger: Logger;
      /** Told when deliveries were queued (the worker sends them at once). */
      queued?: () => void;
    },
  ) {}

  /** Evaluates the subscriptions of the event's Application, once per event. */
  async onEvent(event: NotifierEvent): Promise<void> {
    // Every such event names its Application (its subject is applications/<namespace>/<name> of it).
    const { namespace, name } = event.data.application;
    const app = { namespace, name };
    const config = await this.deps.settings.current();
    if (config.triggers.size === 0) return;
    let queued = 0;
    await applyOnce(
      this.deps.db,
      { schema: API_SCHEMA, consumer: APPLIED_AS, eventId: event.id },
      async (trx) => {
        queued = await this.evaluate(trx, config, app, event.id);
      },
    );
    if (queued > 0) this.deps.queued?.();
  }

  private async evaluate(
    trx: Transaction<ApiDatabase>,
    config: NotificationsConfig,
    key: { namespace: string; name: string },
    eventId: string,
  ): Promise<number> {
    const stored = await findApplication(trx, key.namespace, key.name);
    if (!stored) return 0;
    const [operation] = await syncHistory(trx, key.namespace, key.name, 1);
    const vars = { app: applicationView(stored, operation), context: {} };
    const application = `${key.namespace}/${key.name}`;
    const warn = (message: string) => this.deps.logger.warn({ application }, `notifications: ${message}`);
    let queued = 0;
    const at = new Date();
    for (const p of plan(config, stored.application.metadata, vars, warn)) {
      const state = trx.withSchema('api');
      if (!p.triggered) {
        if (!p.keep)
          await state
            .deleteFrom('notification_state')
            .where('application', '=', application)
            .where('key', '=', p.key)
            .execute();
        continue;
      }
      const inserted = await state
        .insertInto('notification_state')
        .values({ application, key: p.key, notified_at: at })
        .onConflict((oc) => oc.doNothing())
        .returning('key')
        .executeTakeFirst();
      if (!inserted) continue;
      await state
        .insertInto('notification_deliveries')
        .values({
          application,
          trigger: p.trigger,
          templates: JSON.stringify(p.templates),
          service: p.service,
          recipient: p.recipient,
          vars: JSON.stringify({ ...vars, notificationType: config.services.get(p.service)!.kind }),
          event_id: eventId,
          next_attempt_at: at,
          created_at: at,
        })
        .execute();
      queued++;
    }
    return queued;
  }
}
