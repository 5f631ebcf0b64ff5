// Argo CD Notifications (docs/notifications.md): what was notified (Argo keeps it in the
// notified.notifications.argoproj.io annotation; Capstan in notification_state, one row per
// trigger condition, oncePer value and destination, removed when the condition turns false), the
// queue of deliveries (filled by the notifier inside the event's transaction, emptied by the delivery
// worker outside it) and one row per delivery attempt.
import { sql, type Kysely, type Migration } from 'kysely';

export const notifications: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table api.notification_state (
      application text not null,
      key text not null,
      notified_at timestamptz not null,
      primary key (application, key)
    )`.execute(db);
    await sql`create table api.notification_deliveries (
      id bigserial primary key,
      application text not null,
      trigger text not null,
      templates jsonb not null,
      service text not null,
      recipient text not null,
      vars jsonb not null,
      event_id text not null,
      status text not null default 'pending',
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      last_error text not null default '',
      created_at timestamptz not null,
      finished_at timestamptz
    )`.execute(db);
    await sql`create index notification_deliveries_due on api.notification_deliveries (next_attempt_at)
      where status = 'pending'`.execute(db);
    await sql`create table api.notification_attempts (
      delivery_id bigint not null references api.notification_deliveries (id) on delete cascade,
      attempt integer not null,
      at timestamptz not null,
      outcome text not null,
      http_status integer not null,
      reason text not null,
      primary key (delivery_id, attempt)
    )`.execute(db);
  },
};
