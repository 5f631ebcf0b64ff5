// Argo CD's configuration objects applied through the api (argocd-cm, argocd-rbac-cm,
// argocd-cmd-params-cm, argocd-secret): every version, the projection of the settings/<name>
// aggregates. Sensitive values (argocd-secret, oidc.config, dex.config) are not stored: Capstan
// implements none of them yet; their key names are.
import { sql, type Kysely, type Migration } from 'kysely';

export const settingsVersions: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table api.settings (
      object text not null,
      version integer not null,
      data jsonb not null,
      sensitive_keys jsonb not null,
      actor text not null,
      applied_at timestamptz not null,
      primary key (object, version)
    )`.execute(db);
  },
};
