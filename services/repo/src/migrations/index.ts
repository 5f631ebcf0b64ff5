// The repo service's migrations of schema `repo`, keyed by timestamped name (they run in order).
import type { Migrations } from '@capstan/db';
import { credentials } from './2026_11_20_0001_credentials.js';
import { watches } from './2026_11_20_0002_watches.js';
import { normalizedUrls } from './2026_12_01_0003_normalized_urls.js';
import { appliedSettings } from './2026_12_02_0004_applied_settings.js';
import { helmOci } from './2026_12_10_0004_helm_oci.js';

export const repoMigrations: Migrations = {
  '2026_11_20_0001_credentials': credentials,
  '2026_11_20_0002_watches': watches,
  '2026_12_01_0003_normalized_urls': normalizedUrls,
  '2026_12_02_0004_applied_settings': appliedSettings,
  '2026_12_10_0004_helm_oci': helmOci,
};
