// Argo CD's configuration objects in force in the api: the latest version applied with `capstan
// apply -f` (api.settings), else the object given as a file at start (--argocd-config-dir), as in
// Argo CD where the ConfigMap is whatever was last written. The one read for the keys the api takes
// from the object itself rather than from a setting of its own (@capstan/policy OBJECT_READ_SETTINGS):
// argocd-cm's users.anonymous.enabled, admin.enabled, accounts.<name>[.enabled], url, oidc.config;
// argocd-rbac-cm's scopes; argocd-secret's oidc.* values; the notifications objects. An applied
// version replaces the file's object whole (a key it leaves out is unset), so removing a key by apply
// works as in Argo CD.
import type { Kysely } from 'kysely';
import type { ArgoConfigObject } from '@capstan/policy';
import type { ArgoFileObjects } from '@capstan/service';
import type { Keyring } from '@capstan/sealing';
import type { ApiDatabase } from '../support/db.table.js';
import { readSealedValues } from './settings-secrets.js';

export interface ObjectInForce {
  data: Readonly<Record<string, string>>;
  /** `applied v3`, or the files it came from. */
  from: { kind: 'applied'; version: number } | { kind: 'argocd-file'; files: readonly string[] };
}

export class ArgoObjectsInForce {
  constructor(
    readonly db: Kysely<ApiDatabase>,
    private readonly files: ArgoFileObjects = {},
  ) {}

  /** The object in force, undefined when it was neither applied nor given as a file. */
  async object(object: ArgoConfigObject): Promise<ObjectInForce | undefined> {
    const row = await this.db
      .withSchema('api')
      .selectFrom('settings')
      .select(['data', 'version'])
      .where('object', '=', object)
      .orderBy('version', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (row) return { data: row.data, from: { kind: 'applied', version: row.version } };
    const file = this.files[object];
    return file ? { data: file.data, from: { kind: 'argocd-file', files: file.files } } : undefined;
  }

  async data(object: ArgoConfigObject): Promise<Readonly<Record<string, string>> | undefined> {
    return (await this.object(object))?.data;
  }

  /**
   * The values of a Secret (argocd-secret, argocd-notifications-secret): the sealed ones of the
   * applied version, else the file's (an applied version with a key left out has no such value).
   */
  async secrets(keyring: Keyring, object: ArgoConfigObject): Promise<Map<string, string>> {
    const applied = await this.db
      .withSchema('api')
      .selectFrom('settings')
      .select('version')
      .where('object', '=', object)
      .limit(1)
      .executeTakeFirst();
    if (applied) return readSealedValues(this.db, keyring, object);
    return new Map(Object.entries(this.files[object]?.data ?? {}));
  }

  /** The objects given as files that no applied version replaces (for `capstan admin settings`). */
  async fileObjects(): Promise<
    { object: ArgoConfigObject; data: Record<string, string>; files: string[] }[]
  > {
    const names = Object.keys(this.files) as ArgoConfigObject[];
    if (names.length === 0) return [];
    const applied = await this.db
      .withSchema('api')
      .selectFrom('settings')
      .select('object')
      .distinct()
      .where('object', 'in', names)
      .execute();
    const replaced = new Set(applied.map((r) => r.object));
    return names
      .filter((n) => !replaced.has(n))
      .sort()
      .map((n) => ({ object: n, data: this.files[n]!.data, files: this.files[n]!.files }));
  }
}
