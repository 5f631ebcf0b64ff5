// Single sign-on users as the provider last vouched for them (docs/sso.md): the groups of the last
// successful login or refresh and when, the live login chains (a refresh token's id, or a session's
// id when the provider gave no refresh token, with its expiry), and when and why the user's standing
// ended (logged out of every session, refused by the provider at a refresh). An ApplicationSet owned
// by such a user is reconciled with these groups only while they are recent and the standing holds.
// delegation_grants says whether a recorded owner is a local account or a single sign-on subject.
import { sql, type Kysely, type Migration } from 'kysely';

export const ssoSubjects: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table api.sso_subjects (
      subject text primary key,
      issuer text not null,
      groups jsonb not null,
      verified_at timestamptz not null,
      sessions jsonb not null default '{}'::jsonb,
      ended_at timestamptz,
      ended_reason text
    )`.execute(db);
    await sql`alter table api.delegation_grants
      add column owner_kind text not null default 'account'
      check (owner_kind in ('account', 'sso'))`.execute(db);
  },
};
