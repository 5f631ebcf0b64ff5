// The pages of stamps a list reads on every call, parsed once per distinct content. PostgreSQL is
// asked on every call, so a page is never older than the call that reads it; when the page's text
// is the one already parsed for the same query (same SHA-256), only the hash crosses the wire and
// the parsed stamps are reused.
import type { Kysely } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';
import {
  pageApplicationStamps,
  type ApplicationPageQuery,
  type ApplicationStamp,
} from './application.repository.js';

/** Stamps held across all pages (a page holds up to 1,000); beyond this, start afresh. */
const MAX_STAMPS = 50_000;

export class ApplicationStampPages {
  private readonly parsed = new Map<string, { hash: string; stamps: readonly ApplicationStamp[] }>();
  private held = 0;

  constructor(private readonly db: Kysely<ApiDatabase>) {}

  async read(q: ApplicationPageQuery): Promise<readonly ApplicationStamp[]> {
    const key = JSON.stringify([q.projects, q.labels, q.after ?? null, q.limit]);
    const known = this.parsed.get(key);
    const { hash, page } = await pageApplicationStamps(this.db, q, known?.hash ?? '');
    if (page === null && known?.hash === hash) return known.stamps;
    if (page === null) throw new Error('the stamp page was withheld although no page with its hash is held');
    const stamps = (JSON.parse(page) as [string, string, string, string][]).map(
      ([namespace, name, project, stamp]) => ({ namespace, name, project, stamp }),
    );
    this.held += stamps.length - (this.parsed.get(key)?.stamps.length ?? 0);
    if (this.held > MAX_STAMPS) {
      this.parsed.clear();
      this.held = stamps.length;
    }
    this.parsed.set(key, { hash, stamps });
    return stamps;
  }
}
