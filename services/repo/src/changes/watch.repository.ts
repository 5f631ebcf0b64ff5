// repo.watches: the sources this service has been asked to render or resolve, so polling and push
// events know what to re-check. A read model of the watch streams (last_sha follows the events).
import { sql } from 'kysely';
import type { RepoDb } from '../credentials/credential.repository.js';
import { normalizeRepoUrl } from '../credentials/repo-url.js';
import type { WatchKey } from './revision-watch.js';

export interface WatchRow extends WatchKey {
  lastSha: string | null;
}

export async function touchWatch(db: RepoDb, key: WatchKey): Promise<void> {
  await db
    .withSchema('repo')
    .insertInto('watches')
    .values({
      repo_url: key.repoURL,
      normalized_url: normalizeRepoUrl(key.repoURL),
      revision: key.revision,
      project: key.project,
    })
    .onConflict((oc) =>
      oc.columns(['normalized_url', 'revision', 'project']).doUpdateSet({ last_seen_at: sql`now()` }),
    )
    .execute();
}

export async function listWatches(db: RepoDb, filter: { repoURL?: string } = {}): Promise<WatchRow[]> {
  let query = db.withSchema('repo').selectFrom('watches').selectAll();
  if (filter.repoURL) query = query.where('normalized_url', '=', normalizeRepoUrl(filter.repoURL));
  const rows = await query.orderBy('normalized_url').orderBy('revision').orderBy('project').execute();
  return rows.map((r) => ({
    repoURL: r.repo_url,
    revision: r.revision,
    project: r.project,
    lastSha: r.last_sha,
  }));
}

export async function recordWatchSha(db: RepoDb, key: WatchKey, sha: string): Promise<void> {
  await db
    .withSchema('repo')
    .updateTable('watches')
    .set({ last_sha: sha, checked_at: new Date() })
    .where('normalized_url', '=', normalizeRepoUrl(key.repoURL))
    .where('revision', '=', key.revision)
    .where('project', '=', key.project)
    .execute();
}
