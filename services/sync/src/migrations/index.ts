import type { Migrations } from '@capstan/db';
import { syncTables } from './2026_11_20_0001_sync.js';
import { appliedByObject } from './2026_11_25_0001_applied_by_object.js';
import { operationRetry } from './2026_11_25_0002_operation_retry.js';
import { reconcileStatus } from './2026_11_25_0100_reconcile_status.js';
import { appliedSettings } from './2026_11_26_0101_settings.js';
import { operationTrace } from './2026_11_27_0401_operation_trace.js';

export const syncMigrations: Migrations = {
  '2026_11_20_0001_sync': syncTables,
  '2026_11_25_0001_applied_by_object': appliedByObject,
  '2026_11_25_0002_operation_retry': operationRetry,
  '2026_11_25_0100_reconcile_status': reconcileStatus,
  '2026_11_26_0101_settings': appliedSettings,
  '2026_11_27_0401_operation_trace': operationTrace,
};
