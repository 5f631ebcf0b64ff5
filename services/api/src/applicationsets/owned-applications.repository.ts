// Reads of the applications projection by owner: the Applications an ApplicationSet owns (its
// controller owner reference), and the recorded owners of sets (api.delegation_grants, holder appset).
import { sql, type Kysely } from 'kysely';
import type { Application } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import { findApplications, type StoredApplication } from '../applications/application.repository.js';
import { APPLICATION_SET_KIND, controllerOf, type SetRef } from './ownership.js';

/** Applications with owner references (of `namespace`, when given), with just what ownership needs. */
function ownedRows(db: Kysely<ApiDatabase>, namespace?: string) {
  let q = db
    .withSchema('api')
    .selectFrom('applications')
    .select([
      'namespace',
      'name',
      'project',
      sql<unknown>`manifest->'metadata'->'ownerReferences'`.as('refs'),
    ]);
  if (namespace) q = q.where('namespace', '=', namespace);
  return q;
}

/** The ApplicationSet controlling an owned row, if any. */
function controllingSet(r: { namespace: string; name: string; refs: unknown }): string | undefined {
  const app = {
    metadata: { name: r.name, namespace: r.namespace, ownerReferences: r.refs },
  } as unknown as Application;
  const c = controllerOf(app);
  return c?.kind === APPLICATION_SET_KIND ? c.name : undefined;
}

/** Name and project of every Application owned by `set`, by name. */
export async function findOwnedApplications(db: Kysely<ApiDatabase>, set: SetRef): Promise<OwnedSummary[]> {
  const owner = JSON.stringify([{ kind: APPLICATION_SET_KIND, name: set.name }]);
  const rows = await ownedRows(db, set.namespace)
    .where(sql<boolean>`(manifest->'metadata'->'ownerReferences') @> ${owner}::jsonb`)
    .execute();
  return rows
    .filter((r) => controllingSet(r) === set.name)
    .map((r) => ({ name: r.name, project: r.project }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Existing Applications of `namespace` with these names, by name. */
export async function findByNames(
  db: Kysely<ApiDatabase>,
  namespace: string,
  names: readonly string[],
): Promise<Map<string, StoredApplication>> {
  const found = await findApplications(
    db,
    names.map((name) => ({ namespace, name })),
  );
  return new Map(found.map((a) => [a.application.metadata.name, a]));
}

export interface OwnedSummary {
  name: string;
  project: string;
}

/** For every set of `namespace` (every namespace when empty) that owns Applications: their names and projects. */
export async function ownedBySet(
  db: Kysely<ApiDatabase>,
  namespace: string,
): Promise<Map<string, OwnedSummary[]>> {
  const rows = await ownedRows(db, namespace)
    .where(sql<boolean>`manifest->'metadata' ? 'ownerReferences'`)
    .execute();
  const out = new Map<string, OwnedSummary[]>();
  for (const r of rows) {
    const set = controllingSet(r);
    if (set === undefined) continue;
    const key = `${r.namespace}/${set}`;
    out.set(key, [...(out.get(key) ?? []), { name: r.name, project: r.project }]);
  }
  return out;
}

/** The recorded owner of each set the appset service holds, by `<namespace>/<name>`. */
export async function setOwners(db: Kysely<ApiDatabase>): Promise<Map<string, string>> {
  const rows = await db
    .withSchema('api')
    .selectFrom('delegation_grants')
    .select(['resource', 'owner'])
    .where('holder', '=', 'appset')
    .where('resource', 'like', 'applicationsets/%')
    .execute();
  return new Map(rows.map((r) => [r.resource.slice('applicationsets/'.length), r.owner]));
}

/** The recorded owner of one set (none recorded: undefined). */
export async function setOwner(db: Kysely<ApiDatabase>, set: SetRef): Promise<string | undefined> {
  const row = await db
    .withSchema('api')
    .selectFrom('delegation_grants')
    .select('owner')
    .where('holder', '=', 'appset')
    .where('resource', '=', `applicationsets/${set.namespace}/${set.name}`)
    .executeTakeFirst();
  return row?.owner;
}
