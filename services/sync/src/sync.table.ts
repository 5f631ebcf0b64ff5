// kysely types of the sync schema (see migrations/).
import type { ColumnType, Generated, Kysely, Transaction } from 'kysely';
import type { EventStoreDatabase } from '@capstan/events';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface ProjectRow {
  name: string;
  manifest: unknown;
  updated_at: Timestamp;
}

export interface ApplicationRow {
  namespace: string;
  name: string;
  manifest: unknown;
  updated_at: Timestamp;
}

export interface ClusterRow {
  server: string;
  name: string;
  project: string | null;
  updated_at: Timestamp;
}

export type OperationStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface OperationRow {
  operation_id: string;
  app_namespace: string;
  app_name: string;
  status: OperationStatus;
  request: unknown;
  trigger_event_id: string;
  actor: string;
  correlation_id: string | null;
  attempts: Generated<number>;
  not_before: Timestamp;
  lease_until: Date | null;
  created_at: Timestamp;
  finished_at: Date | null;
  reason: string | null;
  /** syncPolicy.retry: retries so far, the attempt count when the last was scheduled, the Application then. */
  retries: Generated<number>;
  retry_base: Generated<number>;
  app_fingerprint: string | null;
  /** W3C traceparent of the span that queued it (null: tracing off). */
  trace_parent: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface AppliedResourceRow {
  app_namespace: string;
  app_name: string;
  server: string;
  api_version: string;
  kind: string;
  namespace: string;
  name: string;
}

export interface ReconcileStatusRow {
  app_namespace: string;
  app_name: string;
  version: number;
  fingerprint: string;
  sync_status: string;
  health_status: string;
  reconciled_at: Timestamp;
}

/** The service's database: its own tables and the event store's, in schema `sync`. */
export type SyncDb = Kysely<SyncDatabase & EventStoreDatabase>;
export type SyncTrx = Transaction<SyncDatabase & EventStoreDatabase>;
export type SyncDbOrTrx = SyncDb | SyncTrx;

export interface SyncDatabase {
  projects: ProjectRow;
  applications: ApplicationRow;
  clusters: ClusterRow;
  operations: OperationRow;
  applied_resources: AppliedResourceRow;
  reconcile_status: ReconcileStatusRow;
  applied_settings: AppliedSettingsRow;
}

/** The latest applied version of an Argo CD configuration object (argocd-cm, ...). */
export interface AppliedSettingsRow {
  object: string;
  version: number;
  data: Record<string, string>;
}
