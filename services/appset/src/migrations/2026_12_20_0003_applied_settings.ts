// The latest version of each Argo CD configuration object applied through the api
// (io.capstan.settings.changed.v1), so argocd-cmd-params-cm's applicationsetcontroller.log.level is
// followed live and read at start. Never a secret value (the events carry none).
import { appliedSettingsMigration } from '@capstan/events';

export const appliedSettings = appliedSettingsMigration('appset');
