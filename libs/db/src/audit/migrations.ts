// Migrations of the shared `audit` schema. Every service runs them at start-up (idempotent, under
// kysely's migration lock); no service owns audit rows after they are written: nobody may change them.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Migrations } from '../migrate.js';

const chain = (t: ReturnType<Kysely<unknown>['schema']['createTable']>) =>
  t
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().unique());

const tables: Migration = {
  async up(db) {
    const s = db.schema.withSchema('audit');
    await chain(s.createTable('sync_decisions'))
      .addColumn('sync_id', 'text', (c) => c.notNull())
      .addColumn('application', 'text', (c) => c.notNull())
      .addColumn('project', 'text', (c) => c.notNull())
      .addColumn('project_chain', 'jsonb', (c) => c.notNull())
      .addColumn('destination_server', 'text')
      .addColumn('destination_namespace', 'text')
      .addColumn('impersonation', 'boolean', (c) => c.notNull())
      .addColumn('strict_mode', 'boolean', (c) => c.notNull())
      .addColumn('rules_considered', 'jsonb', (c) => c.notNull())
      .addColumn('matched_rule_index', 'integer')
      .addColumn('matched_rule_pattern', 'text')
      .addColumn('service_account', 'text')
      .addColumn('username', 'text')
      .addColumn('fallback', 'text')
      .addColumn('decision', 'text', (c) => c.notNull().check(sql`decision in ('allow', 'deny')`))
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('revision', 'text')
      .addColumn('trigger_event_id', 'text')
      .addColumn('actor', 'text', (c) => c.notNull())
      .execute();
    await chain(s.createTable('resource_results'))
      .addColumn('sync_id', 'text', (c) => c.notNull())
      .addColumn('application', 'text', (c) => c.notNull())
      .addColumn('verb', 'text', (c) => c.notNull())
      .addColumn('api_group', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('namespace', 'text')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('identity', 'text', (c) => c.notNull())
      .addColumn('http_status', 'integer')
      .addColumn('message', 'text', (c) => c.notNull())
      .execute();
    await chain(s.createTable('credential_decisions'))
      .addColumn('operation', 'text', (c) => c.notNull())
      .addColumn('repo_url', 'text', (c) => c.notNull())
      .addColumn('project', 'text')
      .addColumn('application', 'text')
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('candidates', 'jsonb', (c) => c.notNull())
      .addColumn('chosen_id', 'text')
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('message', 'text')
      .execute();
    await chain(s.createTable('access_decisions'))
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('resource', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('object', 'text', (c) => c.notNull())
      .addColumn('decision', 'text', (c) => c.notNull().check(sql`decision in ('allow', 'deny')`))
      .addColumn('policy_line', 'text')
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('via', 'text', (c) => c.notNull())
      .execute();

    // The questions operators ask: "every sync of app X last week", "who used credential Y",
    // "every deny today", "what did user U do".
    const idx = (name: string, table: string, cols: string[]) =>
      s.createIndex(name).on(table).columns(cols).execute();
    await idx('sync_decisions_app_time', 'sync_decisions', ['application', 'occurred_at']);
    await idx('sync_decisions_project_time', 'sync_decisions', ['project', 'occurred_at']);
    await idx('sync_decisions_decision_time', 'sync_decisions', ['decision', 'occurred_at']);
    await idx('sync_decisions_actor_time', 'sync_decisions', ['actor', 'occurred_at']);
    await idx('resource_results_sync', 'resource_results', ['sync_id']);
    await idx('resource_results_app_time', 'resource_results', ['application', 'occurred_at']);
    await idx('credential_decisions_chosen_time', 'credential_decisions', ['chosen_id', 'occurred_at']);
    await idx('credential_decisions_url_time', 'credential_decisions', ['repo_url', 'occurred_at']);
    await idx('credential_decisions_project_time', 'credential_decisions', ['project', 'occurred_at']);
    await idx('access_decisions_subject_time', 'access_decisions', ['subject', 'occurred_at']);
    await idx('access_decisions_decision_time', 'access_decisions', ['decision', 'occurred_at']);

    // Append-only: a trigger refuses UPDATE, DELETE and TRUNCATE for every role, owner included.
    await sql`
      create or replace function audit.refuse_change() returns trigger language plpgsql as $$
      begin
        raise exception 'audit.% is append-only: % refused', tg_table_name, lower(tg_op)
          using errcode = 'insufficient_privilege';
      end $$`.execute(db);
    for (const table of ['sync_decisions', 'resource_results', 'credential_decisions', 'access_decisions']) {
      await sql`create trigger refuse_update_delete before update or delete on ${sql.table(`audit.${table}`)}
        for each row execute function audit.refuse_change()`.execute(db);
      await sql`create trigger refuse_truncate before truncate on ${sql.table(`audit.${table}`)}
        for each statement execute function audit.refuse_change()`.execute(db);
    }

    // Services' database roles may insert and select only. The role is NOLOGIN: deployments grant it
    // to each service's login role (docs/audit.md).
    await sql`
      do $$ begin
        if not exists (select 1 from pg_roles where rolname = 'capstan_audit_writer') then
          create role capstan_audit_writer nologin;
        end if;
      end $$`.execute(db);
    await sql`grant usage on schema audit to capstan_audit_writer`.execute(db);
    await sql`grant select, insert on all tables in schema audit to capstan_audit_writer`.execute(db);
    await sql`grant usage on all sequences in schema audit to capstan_audit_writer`.execute(db);
  },
};

const views: Migration = {
  async up(db) {
    await sql`
      create view audit.sync_history as
        select d.occurred_at, d.application, d.project, d.destination_server, d.destination_namespace,
               d.impersonation, d.username, d.decision, d.reason, d.revision, d.actor, d.sync_id,
               (select count(*) from audit.resource_results r where r.sync_id = d.sync_id) as resources,
               (select count(*) from audit.resource_results r
                 where r.sync_id = d.sync_id and (r.http_status is null or r.http_status >= 400)) as failed_resources
          from audit.sync_decisions d`.execute(db);
    await sql`
      create view audit.credential_usage as
        select occurred_at, chosen_id as credential_id, repo_url, project, application, actor, operation, reason
          from audit.credential_decisions where chosen_id is not null`.execute(db);
    await sql`
      create view audit.denials as
        select occurred_at, 'sync' as kind, actor as subject, application as object, reason
          from audit.sync_decisions where decision = 'deny'
        union all
        select occurred_at, 'access', subject, resource || '/' || action || ' ' || object, reason
          from audit.access_decisions where decision = 'deny'
        union all
        select occurred_at, 'credential', actor, repo_url, coalesce(message, reason)
          from audit.credential_decisions where outcome = 'deny'`.execute(db);
    await sql`grant select on audit.sync_history, audit.credential_usage, audit.denials to capstan_audit_writer`.execute(
      db,
    );
  },
};

// Every change of an Argo CD configuration object applied through the api (argocd-cm, ...).
const settingsChanges: Migration = {
  async up(db) {
    await chain(db.schema.withSchema('audit').createTable('settings_changes'))
      .addColumn('object', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('changes', 'jsonb', (c) => c.notNull())
      .addColumn('warnings', 'jsonb', (c) => c.notNull())
      .execute();
    await db.schema
      .withSchema('audit')
      .createIndex('settings_changes_object_time')
      .on('settings_changes')
      .columns(['object', 'occurred_at'])
      .execute();
    await sql`create trigger refuse_update_delete before update or delete on audit.settings_changes
      for each row execute function audit.refuse_change()`.execute(db);
    await sql`create trigger refuse_truncate before truncate on audit.settings_changes
      for each statement execute function audit.refuse_change()`.execute(db);
    await sql`grant select, insert on audit.settings_changes to capstan_audit_writer`.execute(db);
  },
};

/**
 * Which attempt of a sync operation wrote a decision or a resource result: an attempt that died
 * (its replica killed) has written results that its retry writes again, and they must be told
 * apart. Rows from before have none (their hash leaves the column out, see contentOf). The history
 * view counts, per decision, the results of that attempt only.
 */
const attempts: Migration = {
  async up(db) {
    await sql`alter table audit.sync_decisions add column attempt integer`.execute(db);
    await sql`alter table audit.resource_results add column attempt integer`.execute(db);
    await sql`create index resource_results_sync_attempt on audit.resource_results (sync_id, attempt)`.execute(
      db,
    );
    await sql`drop view audit.sync_history`.execute(db);
    await sql`
      create view audit.sync_history as
        select d.occurred_at, d.application, d.project, d.destination_server, d.destination_namespace,
               d.impersonation, d.username, d.decision, d.reason, d.revision, d.actor, d.sync_id, d.attempt,
               (select count(*) from audit.resource_results r
                 where r.sync_id = d.sync_id and r.attempt is not distinct from d.attempt) as resources,
               (select count(*) from audit.resource_results r
                 where r.sync_id = d.sync_id and r.attempt is not distinct from d.attempt
                   and (r.http_status is null or r.http_status >= 400)) as failed_resources
          from audit.sync_decisions d`.execute(db);
    await sql`grant select on audit.sync_history to capstan_audit_writer`.execute(db);
  },
};

// Every delivery to the api's git webhook (docs/webhooks.md): provider, repository, revision, outcome.
const webhookDeliveries: Migration = {
  async up(db) {
    await chain(db.schema.withSchema('audit').createTable('webhook_deliveries'))
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('repo_url', 'text')
      .addColumn('revision', 'text')
      .addColumn('after_sha', 'text')
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('http_status', 'integer', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('applications', 'jsonb', (c) => c.notNull())
      .addColumn('event_ids', 'jsonb', (c) => c.notNull())
      .addColumn('peer', 'text', (c) => c.notNull())
      .execute();
    const idx = (name: string, cols: string[]) =>
      db.schema.withSchema('audit').createIndex(name).on('webhook_deliveries').columns(cols).execute();
    await idx('webhook_deliveries_repo_time', ['repo_url', 'occurred_at']);
    await idx('webhook_deliveries_outcome_time', ['outcome', 'occurred_at']);
    await sql`create trigger refuse_update_delete before update or delete on audit.webhook_deliveries
      for each row execute function audit.refuse_change()`.execute(db);
    await sql`create trigger refuse_truncate before truncate on audit.webhook_deliveries
      for each statement execute function audit.refuse_change()`.execute(db);
    await sql`grant select, insert on audit.webhook_deliveries to capstan_audit_writer`.execute(db);
    await sql`grant usage on all sequences in schema audit to capstan_audit_writer`.execute(db);
  },
};

// Every attempt to deliver an Argo CD notification (docs/notifications.md).
const notificationDeliveries: Migration = {
  async up(db) {
    await chain(db.schema.withSchema('audit').createTable('notification_deliveries'))
      .addColumn('application', 'text', (c) => c.notNull())
      .addColumn('trigger', 'text', (c) => c.notNull())
      .addColumn('service', 'text', (c) => c.notNull())
      .addColumn('recipient', 'text', (c) => c.notNull())
      .addColumn('target', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('http_status', 'integer', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .withSchema('audit')
      .createIndex('notification_deliveries_app_time')
      .on('notification_deliveries')
      .columns(['application', 'occurred_at'])
      .execute();
    await sql`create trigger refuse_update_delete before update or delete on audit.notification_deliveries
      for each row execute function audit.refuse_change()`.execute(db);
    await sql`create trigger refuse_truncate before truncate on audit.notification_deliveries
      for each statement execute function audit.refuse_change()`.execute(db);
    await sql`grant select, insert on audit.notification_deliveries to capstan_audit_writer`.execute(db);
    await sql`grant usage on all sequences in schema audit to capstan_audit_writer`.execute(db);
  },
};

export const auditMigrations: Migrations = {
  '2026_11_20_0001_audit_tables': tables,
  '2026_11_20_0002_audit_views': views,
  '2026_11_26_0101_audit_settings_changes': settingsChanges,
  '2026_11_26_0201_audit_attempts': attempts,
  '2026_11_27_0201_audit_webhook_deliveries': webhookDeliveries,
  '2026_11_27_0501_audit_notification_deliveries': notificationDeliveries,
};
