// The repository credential as the service sees it. The secret parts (password, SSH key) live
// only in `CredentialSecret`, which is decrypted on demand for a checkout and never leaves the
// service; everything else is metadata that may be listed, audited and returned.

export type RepositoryType = 'git' | 'helm';

export interface CredentialMetadata {
  id: string;
  /** Argo CD secret name: `repo-<fnv>` for imperative credentials, the Secret's name for declarative ones. */
  name: string;
  /** The URL as given. */
  url: string;
  /** Project the credential is scoped to; '' when unscoped (usable by every project). */
  project: string;
  type: RepositoryType;
  /** Display name (Argo CD's `name` field), not an identifier. */
  displayName: string;
  username: string;
  hasPassword: boolean;
  hasSshPrivateKey: boolean;
  insecure: boolean;
  /** Argo CD's enableOCI: a Helm repository that is an OCI registry. */
  enableOci: boolean;
  /** Argo CD's insecureOCIForceHttp: the OCI registry is reached over plain HTTP. */
  insecureOciForceHttp: boolean;
  /** `api` when created through the API, `declarative` when applied as an Argo CD Secret. */
  origin: 'api' | 'declarative';
  createdAt: Date;
  updatedAt: Date;
}

/** The secret parts, only ever held decrypted in memory for the duration of one use. */
export interface CredentialSecret {
  password?: string;
  sshPrivateKey?: string;
}

/** What a caller supplies to create or replace a credential. */
export interface CredentialInput {
  url: string;
  project: string;
  type: RepositoryType;
  displayName: string;
  username: string;
  insecure: boolean;
  enableOci?: boolean;
  insecureOciForceHttp?: boolean;
  secret: CredentialSecret;
  /** Explicit name (declarative secrets keep theirs); defaults to the Argo CD-compatible name. */
  name?: string;
}
