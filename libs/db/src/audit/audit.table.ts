// The audit schema: the product's memory and part of its public interface (see docs/audit.md).
// Every table is append-only and hash-chained; `AuditRow<T>` is what a caller supplies, the chain
// columns are filled in by appendAudit.
import type { Generated } from 'kysely';

interface ChainColumns {
  id: Generated<number>;
  occurred_at: Date;
  prev_hash: string;
  hash: string;
}

/** One destinationServiceAccounts rule as the decision saw it. */
export interface RuleConsidered {
  index: number;
  server: string;
  namespace: string;
  defaultServiceAccount: string;
  matched: boolean;
  /** The project in the parentProject chain the rule came from. */
  project?: string;
}

export interface SyncDecisionColumns {
  sync_id: string;
  application: string;
  project: string;
  project_chain: string[];
  destination_server: string | null;
  destination_namespace: string | null;
  impersonation: boolean;
  strict_mode: boolean;
  rules_considered: RuleConsidered[];
  matched_rule_index: number | null;
  matched_rule_pattern: string | null;
  service_account: string | null;
  username: string | null;
  fallback: string | null;
  decision: 'allow' | 'deny';
  reason: string;
  revision: string | null;
  trigger_event_id: string | null;
  actor: string;
  /** Which attempt of the operation decided (1 for the first; absent on rows written before 2026-11-26). */
  attempt?: number | null;
}

export interface ResourceResultColumns {
  sync_id: string;
  application: string;
  verb: string;
  api_group: string;
  kind: string;
  namespace: string | null;
  name: string;
  identity: string;
  http_status: number | null;
  message: string;
  /** Which attempt of the operation wrote it: a dead attempt's results are told from its retry's. */
  attempt?: number | null;
}

export interface CredentialCandidate {
  id: string;
  project: string | null;
  url: string;
}

export interface CredentialDecisionColumns {
  operation: 'lookup' | 'get' | 'list' | 'create' | 'update' | 'delete';
  repo_url: string;
  project: string | null;
  application: string | null;
  actor: string;
  candidates: CredentialCandidate[];
  chosen_id: string | null;
  reason: 'project-match' | 'unscoped-fallback' | 'none' | 'ambiguous' | 'exact' | 'not-found' | 'refused';
  outcome: 'allow' | 'deny' | 'error';
  message: string | null;
}

export interface AccessDecisionColumns {
  subject: string;
  resource: string;
  action: string;
  object: string;
  decision: 'allow' | 'deny';
  policy_line: string | null;
  reason: string;
  via: string;
}

/** One key of an Argo CD configuration object as a settings change touched it (never a secret value). */
export interface SettingsKeyChange {
  key: string;
  change: 'added' | 'removed' | 'changed';
  /** The values before and after; absent for sensitive keys (argocd-secret, dex.config, ...). */
  before?: string;
  after?: string;
}

export interface SettingsChangeColumns {
  /** argocd-cm, argocd-rbac-cm, argocd-cmd-params-cm or argocd-secret. */
  object: string;
  version: number;
  actor: string;
  changes: SettingsKeyChange[];
  /** The warnings the apply returned (unknown and not implemented keys). */
  warnings: string[];
}

/**
 * One delivery to the api's git webhook (POST /api/webhook): which provider, repository and revision
 * it named, and what became of it. Never the secret, a signature or the payload.
 */
export interface WebhookDeliveryColumns {
  /** github, gitlab, bitbucket, bitbucketserver, gogs; `unknown` when no provider header matched. */
  provider: string;
  /** The provider's event name (X-GitHub-Event, X-Gitlab-Event, X-Event-Key, X-Gogs-Event). */
  event: string;
  /** The repository's web URL from the payload (null when refused before the payload was read). */
  repo_url: string | null;
  /** The pushed ref's short name (`main`, `v1.2.0`), as Argo CD's ParseRevision gives it. */
  revision: string | null;
  /** The commit the ref now points at. */
  after_sha: string | null;
  /** accepted, ignored (ping, no matching source), duplicate, refused, throttled, too-large, invalid. */
  outcome: 'accepted' | 'ignored' | 'duplicate' | 'refused' | 'throttled' | 'too-large' | 'invalid';
  /** HTTP status answered. */
  http_status: number;
  /** Why (free text, never a secret). */
  reason: string;
  /** The Applications it refreshed (namespace/name) and the repository URLs announced. */
  applications: string[];
  event_ids: string[];
  /** The sender's address. */
  peer: string;
}

/**
 * One attempt to deliver an Argo CD notification (docs/notifications.md): which Application, trigger,
 * service and recipient, and what became of it. Never a secret, a header, the body or a full URL
 * (the target is scheme, host and path only).
 */
export interface NotificationDeliveryColumns {
  /** namespace/name */
  application: string;
  trigger: string;
  service: string;
  recipient: string;
  /** scheme://host/path of a webhook or Slack target; smtp://host:port for email. */
  target: string;
  attempt: number;
  /** sent, retrying (a later attempt follows), failed (no more attempts). */
  outcome: 'sent' | 'retrying' | 'failed';
  /** The receiver's HTTP status (0 for email or no answer). */
  http_status: number;
  /** Why (free text, never a secret). */
  reason: string;
}

export interface AuditTables {
  sync_decisions: SyncDecisionColumns;
  resource_results: ResourceResultColumns;
  credential_decisions: CredentialDecisionColumns;
  access_decisions: AccessDecisionColumns;
  settings_changes: SettingsChangeColumns;
  webhook_deliveries: WebhookDeliveryColumns;
  notification_deliveries: NotificationDeliveryColumns;
}

export type AuditTableName = keyof AuditTables;
export const auditTableNames = [
  'sync_decisions',
  'resource_results',
  'credential_decisions',
  'access_decisions',
  'settings_changes',
  'webhook_deliveries',
  'notification_deliveries',
] as const satisfies readonly AuditTableName[];

export type AuditRow<T extends AuditTableName> = AuditTables[T] & { occurred_at?: Date };
export type StoredAuditRow<T extends AuditTableName> = AuditTables[T] & {
  id: number;
  occurred_at: Date;
  prev_hash: string;
  hash: string;
};

/** kysely database type for `db.withSchema('audit')` queries. */
export type AuditDatabase = { [T in AuditTableName]: AuditTables[T] & ChainColumns };
