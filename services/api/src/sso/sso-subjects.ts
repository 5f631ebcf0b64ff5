// Single sign-on users as the provider last vouched for them (api.sso_subjects, docs/sso.md): each
// successful login or refresh records the groups and the time; logout removes that login chain, and
// the last one ending ends the user's standing; a refresh the provider refuses ends it at once. An
// ApplicationSet owned by a single sign-on user is reconciled with the groups recorded here, and only
// while the standing holds and the last verification is younger than the configured bound.
import { sql, type Kysely } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';

type Db = Kysely<ApiDatabase>;

export interface Verified {
  subject: string;
  issuer: string;
  groups: readonly string[];
  /** The login chain: the refresh token's id, or the session's when there is no refresh token. */
  chain: string;
  chainExpiresAt: Date;
  /** The chain this one replaces (a used refresh token). */
  replaces?: string | undefined;
}

export type OwnerStanding = { ok: true; groups: string[]; verifiedAt: Date } | { ok: false; reason: string };

/** Live chains only: expired ones are dropped on every write. */
const pruned = (now: number) => sql`coalesce((select jsonb_object_agg(key, value)
  from jsonb_each(sso_subjects.sessions) where (value)::bigint > ${now}), '{}'::jsonb)`;

/** A successful login or refresh: groups and time of today, the chain live, any earlier end undone. */
export async function recordVerified(db: Db, v: Verified): Promise<void> {
  const now = Date.now();
  const chain = JSON.stringify({ [v.chain]: v.chainExpiresAt.getTime() });
  await sql`insert into api.sso_subjects as sso_subjects
      (subject, issuer, groups, verified_at, sessions, ended_at, ended_reason)
    values (${v.subject}, ${v.issuer}, ${JSON.stringify(v.groups)}::jsonb, now(), ${chain}::jsonb, null, null)
    on conflict (subject) do update set
      issuer = excluded.issuer, groups = excluded.groups, verified_at = excluded.verified_at,
      sessions = (${pruned(now)} - ${v.replaces ?? ''}::text) || excluded.sessions,
      ended_at = null, ended_reason = null`.execute(db);
}

/** The provider refused a refresh (the user disabled or removed there): every standing ends. */
export async function recordRefused(db: Db, subject: string, reason: string): Promise<void> {
  await db
    .withSchema('api')
    .updateTable('sso_subjects')
    .set({ sessions: '{}', ended_at: new Date(), ended_reason: reason.slice(0, 500) })
    .where('subject', '=', subject)
    .execute();
}

/** A logout: the chain ends; with no live chain left, the user has logged out everywhere. */
export async function recordLogout(db: Db, subject: string, chain: string): Promise<void> {
  const now = Date.now();
  await sql`update api.sso_subjects as sso_subjects
       set sessions = ${pruned(now)} - ${chain}::text
     where subject = ${subject}`.execute(db);
  await sql`update api.sso_subjects
       set ended_at = now(), ended_reason = 'logged out of every session'
     where subject = ${subject} and sessions = '{}'::jsonb and ended_at is null`.execute(db);
}

/**
 * Whether an owner delegation may be issued for the subject, and with which groups: the provider
 * verified it within `maxAgeSeconds`, it has a live login chain, and its standing did not end.
 */
export async function ownerStanding(db: Db, subject: string, maxAgeSeconds: number): Promise<OwnerStanding> {
  const row = await db
    .withSchema('api')
    .selectFrom('sso_subjects')
    .selectAll()
    .where('subject', '=', subject)
    .executeTakeFirst();
  if (!row) return { ok: false, reason: `single sign-on user ${subject} has never logged in` };
  if (row.ended_at)
    return {
      ok: false,
      reason: `single sign-on user ${subject}: ${row.ended_reason ?? 'ended'} (${row.ended_at.toISOString()}); log in again to resume`,
    };
  const age = (Date.now() - row.verified_at.getTime()) / 1000;
  if (age > maxAgeSeconds)
    return {
      ok: false,
      reason: `single sign-on user ${subject} was last verified with the provider at ${row.verified_at.toISOString()}, longer ago than auth.sso.owner-max-verification-age-seconds (${maxAgeSeconds}); log in again to resume`,
    };
  if (!Object.values(row.sessions).some((exp) => exp > Date.now()))
    return {
      ok: false,
      reason: `single sign-on user ${subject} has no live session; log in again to resume`,
    };
  return { ok: true, groups: row.groups, verifiedAt: row.verified_at };
}
