import type { Migrations } from '@capstan/db';
import { syncTables } from './2026_11_20_0001_sync.js';

export const syncMigrations: Migrations = {
  '2026_11_20_0001_sync': syncTables,
};
