// repo.credentials: one row per repository credential. Secret parts are only ever stored sealed
// (AES-256-GCM, key id beside the ciphertext); `seq` gives the stable creation order that
// "first matching credential" refers to.
import type { ColumnType, Generated, Selectable } from 'kysely';

export interface CredentialTable {
  seq: Generated<string>;
  id: string;
  name: string;
  url: string;
  normalized_url: string;
  project: string;
  type: 'git' | 'helm';
  display_name: string;
  username: string;
  insecure: boolean;
  /** Argo CD's enableOCI / insecureOCIForceHttp (Helm repositories that are OCI registries). */
  enable_oci: ColumnType<boolean, boolean | undefined, boolean>;
  insecure_oci_force_http: ColumnType<boolean, boolean | undefined, boolean>;
  has_password: boolean;
  has_ssh_private_key: boolean;
  origin: 'api' | 'declarative';
  key_id: string;
  nonce: Buffer;
  ciphertext: Buffer;
  created_by: string;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export type CredentialRow = Selectable<CredentialTable>;

export interface RepoDatabase {
  credentials: CredentialTable;
  watches: WatchTable;
}

/** repo.watches: sources the service has rendered, polled for new commits. */
export interface WatchTable {
  repo_url: string;
  normalized_url: string;
  revision: string;
  project: string;
  last_sha: string | null;
  last_seen_at: ColumnType<Date, Date | undefined, Date>;
  checked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}
