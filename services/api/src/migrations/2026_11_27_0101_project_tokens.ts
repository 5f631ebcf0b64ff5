// Argo CD's project role tokens (argocd proj role create-token): the JWTs issued for
// proj:<project>:<role>, by id with their issued-at and expiry (Argo keeps them in the AppProject's
// status.jwtTokensByRole). A token is accepted only while its row is here with the same iat: deleting
// the row (delete-token, the role or the project removed) invalidates it.
import { sql, type Kysely, type Migration } from 'kysely';

export const projectTokens: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table api.project_tokens (
      project text not null,
      role text not null,
      id text not null,
      iat bigint not null,
      expires_at timestamptz,
      created_by text not null,
      primary key (project, role, id)
    )`.execute(db);
  },
};
