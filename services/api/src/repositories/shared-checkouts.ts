// Which projects share a checkout: the repo service keys checkouts by the credential actually used
// (DESIGN.md "Credential selection"), so every project whose Applications of a URL resolve to the
// same credential uses one checkout, and projects resolving to different ones never share. The
// resolution is @capstan/policy's selectForProject, the very rule the repo service applies.
import { sql, type Kysely } from 'kysely';
import { sameRepoUrl, selectForProject } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';

export interface RepositoryUse {
  project: string;
  url: string;
}

/** How many (project, URL) pairs are read: the answer stays bounded whatever the tenants create. */
export const MAX_REPOSITORY_USES = 10_000;

/** The (project, repository URL) pairs the stored Applications use (spec.source and spec.sources). */
export async function repositoryUses(db: Kysely<ApiDatabase>): Promise<RepositoryUse[]> {
  const { rows } = await sql<RepositoryUse>`
    select distinct a.project, u.url from api.applications a,
      lateral (
        select a.manifest->'spec'->'source'->>'repoURL' as url
        union
        select s->>'repoURL' from jsonb_array_elements(
          case when jsonb_typeof(a.manifest->'spec'->'sources') = 'array'
            then a.manifest->'spec'->'sources' else '[]'::jsonb end) s
      ) u
    where u.url is not null and u.url <> ''
    limit ${MAX_REPOSITORY_USES}`.execute(db);
  return rows;
}

/**
 * For each credential (by index in `credentials`, which holds every credential in creation order,
 * visible to the caller or not), the projects whose Applications resolve to it: one checkout.
 */
export function sharedCheckouts(
  credentials: ReadonlyArray<{ repo: string; project: string }>,
  uses: readonly RepositoryUse[],
): string[][] {
  const candidates = credentials.map((c, i) => ({ id: String(i), url: c.repo, project: c.project }));
  const out = credentials.map(() => new Set<string>());
  for (const use of uses) {
    if (!credentials.some((c) => sameRepoUrl(c.repo, use.url))) continue;
    const chosen = selectForProject(candidates, use.url, use.project).chosen;
    if (chosen) out[Number(chosen.id)]!.add(use.project);
  }
  return out.map((s) => [...s].sort());
}
