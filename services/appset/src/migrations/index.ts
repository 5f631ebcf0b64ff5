// The appset service's migrations of schema `appset` (after the event store's), keyed by timestamped name.
import type { Migrations } from '@capstan/db';
import { applicationSets } from './2026_11_25_0001_application_sets.js';

export const APPSET_SCHEMA = 'appset';

export const appsetMigrations: Migrations = {
  '2026_11_25_0001_application_sets': applicationSets,
};
