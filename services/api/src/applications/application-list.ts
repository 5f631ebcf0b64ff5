// Listing Applications: keyset pages of (namespace, name), filtered by project and labels in
// PostgreSQL and by RBAC in memory, with one audit row per call.
import type { Kysely } from 'kysely';
import type { RbacEnforcer } from '@capstan/rbac';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';
import { invalid } from '../support/validation.js';
import type { ApplicationCache } from './application-cache.js';
import { ApplicationVisibility } from './application-visibility.js';
import type { ApplicationStampPages } from './application-stamp-pages.js';
import {
  applicationProjects,
  type ApplicationStamp,
  type StoredApplication,
} from './application.repository.js';

export interface ListQuery {
  projects: readonly string[];
  selector: string;
  limit: number;
  pageToken: string;
}

function parseSelector(selector: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of selector
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z0-9./_-]+)\s*==?\s*([A-Za-z0-9._-]*)$/.exec(part);
    if (!m) throw invalid('selector', `"${part}" is not a k=v label requirement`);
    out[m[1]!] = m[2]!;
  }
  return out;
}

function decodePageToken(token: string): { namespace: string; name: string } | undefined {
  if (!token) return undefined;
  try {
    const [namespace, name] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as [
      string,
      string,
    ];
    if (typeof namespace === 'string' && typeof name === 'string') return { namespace, name };
  } catch {
    // fall through
  }
  throw invalid('pageToken', 'is not a token this api issued');
}

function encodePageToken(last: ApplicationStamp): string {
  return Buffer.from(JSON.stringify([last.namespace, last.name])).toString('base64url');
}

/**
 * The projects (of those asked for, or all that hold applications) whose applications the caller
 * may possibly see (those the policy denies as a whole are left out; `none` when that is all of them).
 */
async function visibleProjects(
  db: Kysely<ApiDatabase>,
  asked: readonly string[],
  visibility: ApplicationVisibility,
): Promise<readonly string[] | 'none'> {
  const candidates = asked.length > 0 ? asked : await applicationProjects(db);
  const visible = candidates.filter((p) => !visibility.deniesProject(p));
  if (visible.length === 0) return 'none';
  // Nothing left out: the same query as before.
  return visible.length === candidates.length ? asked : visible;
}

/**
 * The applications the caller may get, in (namespace, name) order, a page at a time (keyset: the
 * token is the last key returned). Which applications exist, and their stamps, come from
 * PostgreSQL on every call, so a list sees every write (on any replica, and the sync status the
 * sync-status consumer applied) the moment it commits; the applications themselves come from
 * memory while their stamp is unchanged. RBAC is decided under one policy for the whole call, once
 * per project where no policy line can tell that project's applications apart.
 */
export async function listApplications(
  deps: {
    db: Kysely<ApiDatabase>;
    authz: Authorizer;
    cache: ApplicationCache;
    stampPages: ApplicationStampPages;
  },
  ctx: RequestContext,
  q: ListQuery,
  policy: { readonly current: RbacEnforcer },
): Promise<{ items: StoredApplication[]; nextPageToken: string }> {
  const limit = q.limit > 0 ? Math.min(q.limit, 1000) : 1000;
  const labels = parseSelector(q.selector);
  let after = decodePageToken(q.pageToken);
  const visibility = new ApplicationVisibility(policy.current, ctx.principal);
  const allowed: ApplicationStamp[] = [];
  let scanned = 0;
  let projects = q.projects;
  let narrowed = false;
  // RBAC filters rows out, so pages of stamps are read until the caller's page is full or rows run
  // out; only the allowed applications are then taken (from the cache or PostgreSQL). When a page
  // leaves the caller's short, the rest is read only from the projects it may see something of
  // (a tenant seeing 1% of 10,000 applications would otherwise read all 10,000 stamps, a page at a
  // time, for each page it is shown).
  for (;;) {
    const page = await deps.stampPages.read({ projects, labels, after, limit });
    scanned += page.length;
    for (const s of page) {
      after = { namespace: s.namespace, name: s.name };
      if (visibility.allows(s.project, s.name)) {
        allowed.push(s);
        if (allowed.length === limit) break;
      }
    }
    if (allowed.length === limit || page.length < limit) break;
    if (!narrowed) {
      narrowed = true;
      const visible = await visibleProjects(deps.db, q.projects, visibility);
      if (visible === 'none') break;
      projects = visible;
    }
  }
  const items = await deps.cache.resolve(allowed);
  await deps.authz.record(
    ctx.principal,
    'applications',
    'list',
    q.projects.length > 0 ? `${q.projects.join(',')}/*` : '*/*',
    ctx.via,
    {
      allowed: true,
      reason: `listed ${items.length} of ${scanned} applications scanned that the caller may get`,
    },
  );
  const last = allowed.at(-1);
  return { items, nextPageToken: last && allowed.length === limit ? encodePageToken(last) : '' };
}
