// kysely types of the api schema (see migrations/).
import type { ColumnType, Generated } from 'kysely';
import type { EventStoreDatabase } from '@capstan/events';

export interface ProjectsTable {
  name: string;
  namespace: string;
  manifest: unknown;
  version: number;
  uid: string;
  created_at: Date;
  updated_at: Date;
}

export interface ApplicationsTable {
  namespace: string;
  name: string;
  project: string;
  manifest: unknown;
  version: number;
  uid: string;
  created_at: Date;
  updated_at: Date;
  sync_status: Generated<string>;
  health_status: Generated<string>;
  operation_id: string | null;
  revision: string | null;
  reconciled_at: Date | null;
  /** Argo CD's status.conditions: [{ type, message, lastTransitionTime }]. */
  conditions: Generated<unknown>;
  /** The reconciler's health message of the Application (status.health.message). */
  health_message: Generated<string>;
  /** The reconciler's per-resource statuses (Argo CD's status.resources). */
  resources: Generated<unknown>;
  /** A multi-source Application's commit per source (status.sync.revisions); [] otherwise. */
  revisions: Generated<unknown>;
}

export interface SyncOperationsTable {
  id: string;
  app_namespace: string;
  app_name: string;
  project: string;
  phase: string;
  message: string;
  revision: string;
  dry_run: boolean;
  prune: boolean;
  initiated_by: string;
  requested_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  identity: Generated<string>;
  impersonated: Generated<boolean>;
  resources: Generated<unknown>;
  /** What started it (syncTrigger kind): user, bus, automated, self-heal, retry, rollback. */
  trigger: Generated<string>;
  /** The sync service's attempt (syncPolicy.retry); retryCount is attempt - 1. */
  attempt: Generated<number>;
  /** The Application's source the operation deployed (RevisionHistory.source). */
  source: Generated<unknown>;
  /** A multi-source Application's: the revision synced per source, and the sources deployed. */
  revisions: Generated<unknown>;
  sources: Generated<unknown>;
  /** Its id in status.history once it succeeded (not a dry run, not a deletion). */
  history_id: Generated<string | null>;
  /** A selective sync's resources (Argo CD's SyncOperationResource list); [] for a full sync. */
  sync_resources: Generated<unknown>;
}

export interface NotificationStateTable {
  application: string;
  key: string;
  notified_at: Date;
}

export interface NotificationDeliveriesTable {
  id: Generated<string>;
  application: string;
  trigger: string;
  templates: unknown;
  service: string;
  recipient: string;
  vars: unknown;
  event_id: string;
  status: Generated<'pending' | 'sent' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Date;
  last_error: Generated<string>;
  created_at: Date;
  finished_at: Date | null;
}

export interface NotificationAttemptsTable {
  delivery_id: string;
  attempt: number;
  at: Date;
  outcome: 'sent' | 'retrying' | 'failed';
  http_status: number;
  reason: string;
}

export interface ClustersTable {
  server: string;
  name: string;
  project: string | null;
  namespaces: unknown;
  labels: unknown;
  credential_type: string;
  insecure: boolean;
  server_name: string;
  has_ca_data: boolean;
  key_id: string;
  version: number;
  uid: string;
  created_at: Date;
  updated_at: Date;
}

export interface SealedRow {
  key_id: string;
  nonce: Buffer;
  ciphertext: Buffer;
}

export interface ClusterCredentialsTable extends SealedRow {
  server: string;
  updated_at: Date;
}

export interface AccountsTable {
  name: string;
  password_hash: string | null;
  enabled: boolean;
  capabilities: unknown;
  groups: unknown;
  created_at: Date;
  password_changed_at: Date;
}

export interface ApiTokensTable {
  id: string;
  account: string;
  issued_at: Date;
  expires_at: Date | null;
}

/** A project role's token (Argo CD's JWTToken): accepted while its row exists with the same iat. */
export interface ProjectTokensTable {
  project: string;
  role: string;
  id: string;
  /** Seconds since the epoch (bigint: read back as a string). */
  iat: string | number;
  expires_at: Date | null;
  created_by: string;
}

export interface RevokedTokensTable {
  jti: string;
  revoked_at: Date;
  expires_at: Date | null;
}

/** A sealed argocd-secret value the api uses (`<object>/<key>`, e.g. `argocd-secret/oidc.clientSecret`). */
export interface SigningKeysTable extends SealedRow {
  id: string;
  created_at: Date;
}

/** Failed logins by key (`account:<name>` or `address:<ip>`), for login throttling. */
export interface LoginFailuresTable {
  key: string;
  fail_count: number;
  last_failed: Date;
}

export interface ApiDatabase extends EventStoreDatabase {
  projects: ProjectsTable;
  applications: ApplicationsTable;
  sync_operations: SyncOperationsTable;
  notification_state: NotificationStateTable;
  notification_deliveries: NotificationDeliveriesTable;
  notification_attempts: NotificationAttemptsTable;
  clusters: ClustersTable;
  cluster_credentials: ClusterCredentialsTable;
  accounts: AccountsTable;
  api_tokens: ApiTokensTable;
  project_tokens: ProjectTokensTable;
  revoked_tokens: RevokedTokensTable;
  signing_keys: SigningKeysTable;
  login_failures: LoginFailuresTable;
  delegation_grants: DelegationGrantsTable;
  sso_subjects: SsoSubjectsTable;
  settings: SettingsTable;
  settings_secrets: SettingsSecretsTable;
}

/** The sealed value of one implemented sensitive key (`argocd-secret/webhook.github.secret`). */
export interface SettingsSecretsTable extends SealedRow {
  id: string;
  object: string;
  key: string;
  updated_at: Date;
}

/** One version of an applied Argo CD configuration object (sensitive values are never stored). */
export interface SettingsTable {
  object: string;
  version: number;
  data: Record<string, string>;
  sensitive_keys: string[];
  actor: string;
  applied_at: Date;
}

export interface DelegationGrantsTable {
  holder: string;
  resource: string;
  owner: string;
  recorded_at: Date;
  /** A local account, or a single sign-on subject (api.sso_subjects). */
  owner_kind: ColumnType<'account' | 'sso', 'account' | 'sso' | undefined, 'account' | 'sso'>;
}

/** A single sign-on user as the provider last vouched for it (migration 2026_11_28_0301). */
export interface SsoSubjectsTable {
  subject: string;
  issuer: string;
  groups: ColumnType<string[], string, string>;
  verified_at: Date;
  /** Live login chains: refresh token (or session) id → expiry in epoch milliseconds. */
  sessions: ColumnType<Record<string, number>, string | undefined, string>;
  ended_at: Date | null;
  ended_reason: string | null;
}
