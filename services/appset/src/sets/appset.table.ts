// Row types of appset.application_sets (kysely).
import type { ColumnType, Generated } from 'kysely';
import type { EventStoreDatabase } from '@capstan/events';
import type { StoredAppSet } from './manifest.js';
import type { AppSetStatus } from './status.js';
import type { ReconciledInputs } from '../reconcile/inputs.js';

type Json<T> = ColumnType<T, string, string>;

export interface ApplicationSetsTable {
  namespace: string;
  name: string;
  uid: string;
  manifest: Json<StoredAppSet>;
  labels: Json<Record<string, string>>;
  status: Json<AppSetStatus>;
  version: number;
  created_at: ColumnType<Date, Date, Date>;
  updated_at: ColumnType<Date, Date, Date>;
  git_repos: Generated<string[]>;
  reads_clusters: Generated<boolean>;
  requeue_seconds: number;
  next_reconcile_at: ColumnType<Date, Date, Date>;
  reconciled_inputs: ColumnType<ReconciledInputs | null, string | null | undefined, string | null>;
}

export interface AppSetDatabase extends EventStoreDatabase {
  application_sets: ApplicationSetsTable;
}
