export { RbacEnforcer, type Principal, type Decision, type EnforcerOptions } from './enforcer.js';
export {
  parsePolicyCsv,
  projectRoleLines,
  PolicyError,
  RESOURCES,
  PROJECT_SCOPED_RESOURCES,
  type PolicyLine,
  type PolicyProblem,
  type ProjectRoleSpec,
} from './policy-csv.js';
export { BUILTIN_POLICY_CSV, ADMIN_ROLE } from './builtin-policy.js';
export { RBAC_MODEL } from './model.js';
export { globMatch } from './glob.js';
