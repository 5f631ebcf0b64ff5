// Argo CD's configuration objects applied through the api, in the sync service: kept in
// sync.applied_settings from io.capstan.settings.changed.v1 (durable sync-settings) and handed to
// LiveSettings, so application.sync.impersonation.enabled, timeout.reconciliation and
// resource.customizations take effect for the next decision without restart. At start the service
// reads the table first, so what was applied while it was down counts from its first sync.
import { settingsChanged, type Bus, type DeadLetterStore, type RunningConsumer } from '@capstan/events';
import type { AppliedObjects, LiveChange, Logger } from '@capstan/service';
import type { SyncDb } from '../sync.table.js';

export const SETTINGS_CONSUMER = 'sync-settings';

export async function readAppliedSettings(db: SyncDb): Promise<AppliedObjects> {
  const rows = await db.withSchema('sync').selectFrom('applied_settings').selectAll().execute();
  const out: AppliedObjects = {};
  for (const r of rows) out[r.object as keyof AppliedObjects] = { version: r.version, data: r.data };
  return out;
}

/** Logs what a change did, naming what did not take effect and why (never silent). */
export function logLiveChange(logger: Logger, change: LiveChange, live: { get(key: string): unknown }): void {
  for (const key of change.changed)
    logger.info(
      { setting: key, value: key === 'resource.customizations' ? '(map)' : live.get(key) },
      `setting ${key} applied`,
    );
  for (const s of change.shadowed) logger.warn({ setting: true }, `applied setting not in effect: ${s}`);
  for (const r of change.refused)
    logger.warn({ setting: r.setting }, `applied setting ${r.setting} refused: ${r.message}`);
  for (const k of change.atNextStart)
    logger.info({ setting: k }, `applied setting ${k} takes effect at the next start`);
}

export async function startSettingsConsumer(
  db: SyncDb,
  bus: Bus,
  options: { deadLetters?: DeadLetterStore; onApplied: (objects: AppliedObjects) => Promise<void> },
): Promise<RunningConsumer> {
  return bus.consume({
    durable: SETTINGS_CONSUMER,
    events: [settingsChanged] as const,
    // One event type: its data is decoded against the catalog already.
    handle: async (event) => {
      const d = event.data;
      // Only a newer version replaces the one kept: redelivery and reordering change nothing.
      await db
        .withSchema('sync')
        .insertInto('applied_settings')
        .values({ object: d.object, version: d.version, data: JSON.stringify(d.data) as never })
        .onConflict((oc) =>
          oc
            .column('object')
            .doUpdateSet({ version: d.version, data: JSON.stringify(d.data) as never })
            .where('applied_settings.version', '<', d.version),
        )
        .execute();
      await options.onApplied(await readAppliedSettings(db));
    },
    ...(options.deadLetters ? { deadLetters: options.deadLetters } : {}),
  });
}
