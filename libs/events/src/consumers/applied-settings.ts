// Argo CD's configuration objects applied through the api, in a service that follows them live: the
// latest version of each object is kept in the service's own `<schema>.applied_settings` from
// io.capstan.settings.changed.v1 (a durable consumer per service) and handed to its LiveSettings,
// so an applied change takes effect for the next decision without restart. At start the service
// reads the table first, so what was applied while it was down counts from its first request.
// Never a secret value: the events carry none.
import { sql, type Kysely, type Migration } from 'kysely';
import type { AppliedObjects } from '@capstan/service';
import type { Bus } from '../bus/bus.js';
import type { DeadLetterStore, RunningConsumer } from '../bus/consumer.js';
import { settingsChanged } from '../catalog/index.js';

interface AppliedSettingsTable {
  object: string;
  version: number;
  data: Record<string, string>;
}
type AppliedSettingsDb = Kysely<{ applied_settings: AppliedSettingsTable }>;

/** The table's migration, for the schema of a service that follows applied settings. */
export function appliedSettingsMigration(schema: string): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await sql`create table ${sql.id(schema, 'applied_settings')} (
        object text primary key,
        version integer not null,
        data jsonb not null
      )`.execute(db);
    },
  };
}

export async function readAppliedSettings<DB>(anyDb: Kysely<DB>, schema: string): Promise<AppliedObjects> {
  const db = anyDb as unknown as AppliedSettingsDb;
  const rows = await db.withSchema(schema).selectFrom('applied_settings').selectAll().execute();
  const out: AppliedObjects = {};
  for (const r of rows) out[r.object as keyof AppliedObjects] = { version: r.version, data: r.data };
  return out;
}

export async function startAppliedSettingsConsumer<DB>(
  bus: Bus,
  anyDb: Kysely<DB>,
  options: {
    schema: string;
    /** The service's durable consumer (`<service>-settings`). */
    durable: string;
    deadLetters?: DeadLetterStore;
    onApplied: (objects: AppliedObjects) => Promise<void> | void;
  },
): Promise<RunningConsumer> {
  const db = anyDb as unknown as AppliedSettingsDb;
  return bus.consume({
    durable: options.durable,
    events: [settingsChanged] as const,
    // One event type: its data is decoded against the catalog already.
    handle: async (event) => {
      const d = event.data;
      // Only a newer version replaces the one kept: redelivery and reordering change nothing.
      await db
        .withSchema(options.schema)
        .insertInto('applied_settings')
        .values({ object: d.object, version: d.version, data: JSON.stringify(d.data) as never })
        .onConflict((oc) =>
          oc
            .column('object')
            .doUpdateSet({ version: d.version, data: JSON.stringify(d.data) as never })
            .where('applied_settings.version', '<', d.version),
        )
        .execute();
      await options.onApplied(await readAppliedSettings(db, options.schema));
    },
    ...(options.deadLetters ? { deadLetters: options.deadLetters } : {}),
  });
}
