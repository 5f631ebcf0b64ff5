// Lists read stamps (version and status) from PostgreSQL and take each application from memory
// when its stamp is unchanged, so a list does not fetch and parse every manifest again. PostgreSQL
// stays the source of truth: a changed stamp (a write on any replica) reloads that application.
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import type { Kysely } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';
import { findApplications, type ApplicationStamp, type StoredApplication } from './application.repository.js';

const MAX_ENTRIES = 50_000;
const keyOf = (s: { namespace: string; name: string }) => `${s.namespace}/${s.name}`;

export class ApplicationCache {
  private readonly entries = new Map<string, { stamp: string; app: StoredApplication }>();

  constructor(private readonly db: Kysely<ApiDatabase>) {}

  /** The applications for these stamps, in the same order (one that vanished meanwhile is left out). */
  async resolve(stamps: readonly ApplicationStamp[]): Promise<StoredApplication[]> {
    const missing = stamps.filter((s) => this.entries.get(keyOf(s))?.stamp !== s.stamp);
    if (missing.length > 0) {
      if (this.entries.size + missing.length > MAX_ENTRIES) this.entries.clear();
      for (const { stamp, ...app } of await findApplications(this.db, missing)) {
        const namespace = app.application.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE;
        this.entries.set(keyOf({ namespace, name: app.application.metadata.name }), { stamp, app });
      }
    }
    return stamps.flatMap((s) => {
      const e = this.entries.get(keyOf(s));
      return e ? [e.app] : [];
    });
  }
}
