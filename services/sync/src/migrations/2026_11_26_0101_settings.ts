// The latest version of each Argo CD configuration object applied through the api
// (io.capstan.settings.changed.v1): read at start, so a restarted sync service applies what was
// applied while it was down. Never a secret value (the events carry none).
import { appliedSettingsMigration } from '@capstan/events';

export const appliedSettings = appliedSettingsMigration('sync');
