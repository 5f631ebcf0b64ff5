// The appset service's migrations of schema `appset` (after the event store's), keyed by timestamped name.
import type { Migrations } from '@capstan/db';
import { applicationSets } from './2026_11_25_0001_application_sets.js';
import { reconciledInputs } from './2026_11_25_0002_reconciled_inputs.js';
import { appliedSettings } from './2026_12_20_0003_applied_settings.js';

export const APPSET_SCHEMA = 'appset';

export const appsetMigrations: Migrations = {
  '2026_11_25_0001_application_sets': applicationSets,
  '2026_11_25_0002_reconciled_inputs': reconciledInputs,
  '2026_12_20_0003_applied_settings': appliedSettings,
};
