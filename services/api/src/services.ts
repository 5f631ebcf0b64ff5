// The api's use cases, wired once and shared by both transports.
import type { Kysely } from 'kysely';
import type { InputLimits } from '@capstan/policy';
import type { ApiDatabase } from './support/db.table.js';
import type { Authenticator } from './auth/authenticator.js';
import type { Delegations } from './auth/delegations.js';
import type { Authorizer } from './rbac/authorizer.js';
import type { PolicyStore } from './rbac/policy-store.js';
import type { ProjectsService } from './projects/projects.service.js';
import type { ApplicationsService } from './applications/applications.service.js';
import type { ClustersService } from './clusters/clusters.service.js';
import type { RepositoriesService } from './repositories/repositories.service.js';
import type { AuditService } from './audit/audit.service.js';
import type { AccountsService } from './accounts/accounts.service.js';
import type { ApplyService } from './apply/apply.service.js';

export interface ApiServices {
  /** Bounds on every request's input (dispatch) and every applied YAML document. */
  inputLimits: InputLimits;
  db: Kysely<ApiDatabase>;
  authn: Authenticator;
  authz: Authorizer;
  delegations: Delegations;
  policy: PolicyStore;
  projects: ProjectsService;
  applications: ApplicationsService;
  clusters: ClustersService;
  repositories: RepositoriesService;
  audit: AuditService;
  accounts: AccountsService;
  apply: ApplyService;
}
