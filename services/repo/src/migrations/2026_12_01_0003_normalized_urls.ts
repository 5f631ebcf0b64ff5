// Recomputes the stored comparison form of repository URLs with @capstan/policy's normaliser (the
// one the api's sourceRepos check also uses; the earlier one of this service differed, e.g. on
// `https://host` versus `https://host/`). Two credentials that now name the same repository in the
// same scope stop the migration with their names, for an operator to resolve; two watches that
// collapse into one keep the one checked last.
import { sql, type Kysely, type Migration } from 'kysely';
import { normalizeRepoUrl } from '@capstan/policy';

interface Row {
  name: string;
  url: string;
  project: string;
}

export const normalizedUrls: Migration = {
  async up(db: Kysely<unknown>) {
    const { rows: credentials } = await sql<Row>`
      select name, url, project from repo.credentials order by seq`.execute(db);
    const seen = new Map<string, string>();
    for (const c of credentials) {
      const key = `${normalizeRepoUrl(c.url)}\n${c.project}`;
      const other = seen.get(key);
      if (other !== undefined)
        throw new Error(
          `credentials ${other} and ${c.name} name the same repository in the same scope; delete one and restart`,
        );
      seen.set(key, c.name);
    }
    // Through a placeholder first, so no intermediate state breaks the (url, project) uniqueness.
    await sql`update repo.credentials set normalized_url = 'migrating:' || id`.execute(db);
    for (const c of credentials) {
      await sql`update repo.credentials set normalized_url = ${normalizeRepoUrl(c.url)} where name = ${c.name}`.execute(
        db,
      );
    }
    const { rows: watches } = await sql<
      Record<string, unknown> & { repo_url: string; revision: string; project: string }
    >`
      select * from repo.watches order by checked_at desc nulls last`.execute(db);
    await sql`delete from repo.watches`.execute(db);
    const kept = new Set<string>();
    for (const w of watches) {
      const normalized = normalizeRepoUrl(w.repo_url);
      const key = `${normalized}\n${w.revision}\n${w.project}`;
      if (kept.has(key)) continue;
      kept.add(key);
      await sql`insert into repo.watches (repo_url, normalized_url, revision, project, last_sha, last_seen_at, checked_at)
        values (${w.repo_url}, ${normalized}, ${w.revision}, ${w.project}, ${w.last_sha}, ${w.last_seen_at}, ${w.checked_at})`.execute(
        db,
      );
    }
  },
  async down() {
    // The comparison form is derived data; nothing to undo.
  },
};
