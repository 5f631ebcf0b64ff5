// The latest version of each Argo CD configuration object applied through the api
// (io.capstan.settings.changed.v1), so argocd-cm's kustomize keys are followed live and read at
// start. Never a secret value (the events carry none).
import { appliedSettingsMigration } from '@capstan/events';

export const appliedSettings = appliedSettingsMigration('repo');
