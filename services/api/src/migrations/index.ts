// The api schema's migrations: the shared event store tables, then the api's own projections and
// account tables. Names are timestamped so they sort in creation order.
import type { Migrations } from '@capstan/db';
import { initialSchema } from './2026_11_20_0001_api.js';
import { loginFailures } from './2026_11_24_0001_login_failures.js';
import { delegationGrants } from './2026_11_24_0010_delegation_grants.js';
import { applicationOwners } from './2026_11_25_0001_application_owners.js';
import { applicationConditions } from './2026_11_25_0020_application_conditions.js';
import { reconciledStatus } from './2026_11_25_0030_reconciled_status.js';
import { settingsVersions } from './2026_11_26_0101_settings.js';
import { projectTokens } from './2026_11_27_0101_project_tokens.js';
import { settingsSecrets } from './2026_11_27_0201_settings_secrets.js';
import { notifications } from './2026_11_27_0501_notifications.js';
import { multiSourceRevisions } from './2026_11_28_0101_multi_source_revisions.js';
import { selectiveSync } from './2026_11_28_0201_selective_sync.js';
import { ssoSubjects } from './2026_11_28_0301_sso_subjects.js';

export const API_SCHEMA = 'api';

/** The api's own migrations (startBackbone adds the event store tables). */
export const apiSchemaMigrations: Migrations = {
  '2026_11_20_0001_api': initialSchema,
  '2026_11_24_0001_login_failures': loginFailures,
  '2026_11_24_0010_delegation_grants': delegationGrants,
  '2026_11_25_0001_application_owners': applicationOwners,
  '2026_11_25_0020_application_conditions': applicationConditions,
  '2026_11_25_0030_reconciled_status': reconciledStatus,
  '2026_11_26_0101_settings': settingsVersions,
  '2026_11_27_0101_project_tokens': projectTokens,
  '2026_11_27_0201_settings_secrets': settingsSecrets,
  '2026_11_27_0501_notifications': notifications,
  '2026_11_28_0101_multi_source_revisions': multiSourceRevisions,
  '2026_11_28_0201_selective_sync': selectiveSync,
  '2026_11_28_0301_sso_subjects': ssoSubjects,
};
