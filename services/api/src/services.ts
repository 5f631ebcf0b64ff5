// The api's use cases, wired once and shared by both transports.
import type { Kysely } from 'kysely';
import type { InputLimits } from '@capstan/policy';
import type { ApiDatabase } from './support/db.table.js';
import type { Authenticator } from './auth/authenticator.js';
import type { Delegations } from './auth/delegations.js';
import type { Authorizer } from './rbac/authorizer.js';
import type { PolicyStore } from './rbac/policy-store.js';
import type { ProjectsService } from './projects/projects.service.js';
import type { ProjectTokensService } from './projects/project-tokens.service.js';
import type { SsoService } from './sso/sso.service.js';
import type { ApplicationsService } from './applications/applications.service.js';
import type { ClustersService } from './clusters/clusters.service.js';
import type { RepositoriesService } from './repositories/repositories.service.js';
import type { AuditService } from './audit/audit.service.js';
import type { DeadLettersService } from './admin/dead-letters.service.js';
import type { AccountsService } from './accounts/accounts.service.js';
import type { ApplyService } from './apply/apply.service.js';
import type { SettingsService } from './settings/settings.service.js';
import type { SettingsView } from './settings/settings-view.js';
import type { ApplicationSetsService } from './applicationsets/applicationsets.service.js';
import type { GeneratedApplicationsService } from './applicationsets/generated-applications.service.js';
import type { GeneratorInputsService } from './applicationsets/generator-inputs.service.js';
import type { SetOwnersService } from './applicationsets/set-owners.service.js';
import type { DeliveredObjectsService } from './delivery/delivered-objects.service.js';
import type { ManagedResourcesService } from './applications/managed-resources.js';
import type { ApplicationChanges } from './applications/application-changes.js';
import type { WebhookService } from './webhooks/webhook.service.js';
import type { NotificationsSettings } from './notifications/notifications-config.js';
import type { LiveApiSettings } from './settings/live-api-settings.js';

export interface ApiServices {
  /** Bounds on every request's input (dispatch) and every applied YAML document. */
  inputLimits: InputLimits;
  /** Applied Argo CD configuration objects (argocd-cm, ...), and what `capstan admin settings` shows. */
  settings: SettingsService;
  settingsView: SettingsView;
  /** The api's own settings in force (start-up configuration with applied objects on top), followed live. */
  liveSettings: LiveApiSettings;
  /** The applied argocd-notifications-cm and -secret, as the notifier reads them. */
  notifications: NotificationsSettings;
  db: Kysely<ApiDatabase>;
  authn: Authenticator;
  authz: Authorizer;
  delegations: Delegations;
  policy: PolicyStore;
  projects: ProjectsService;
  /** capstan proj role create-token / delete-token / list-tokens. */
  projectTokens: ProjectTokensService;
  applications: ApplicationsService;
  clusters: ClustersService;
  repositories: RepositoriesService;
  audit: AuditService;
  /** capstan admin dlq list/replay (every service's dead letters). */
  deadLetters: DeadLettersService;
  accounts: AccountsService;
  /** Single sign-on (OIDC): the web flow, the CLI's code exchange, refresh. */
  sso: SsoService;
  apply: ApplyService;
  /** Public ApplicationSetService (forwarded to the appset service). */
  applicationSets: ApplicationSetsService;
  /** Internal ApplicationSetWritesService (the appset service, delegated). */
  generatedApplications: GeneratedApplicationsService;
  generatorInputs: GeneratorInputsService;
  /** Internal DelegationService (owners of sets). */
  setOwners: SetOwnersService;
  /** Internal DeliveredObjectsService (the sync service: argoproj.io objects from git). */
  deliveredObjects: DeliveredObjectsService;
  /** Argo CD's ManagedResources (forwarded to the sync service). */
  managedResources: ManagedResourcesService;
  /** Applications changed by applied bus events (the UI's live stream, transport/application-stream.ts). */
  changes: ApplicationChanges;
  /** The git webhook, POST /api/webhook (docs/webhooks.md). */
  webhooks: WebhookService;
}
