export { RbacEnforcer, type Principal, type Decision, type EnforcerOptions } from './enforcer.js';
export {
  parsePolicyCsv,
  projectRoleLines,
  PolicyError,
  RBAC_LIMITS,
  type PolicyLine,
  type PolicyProblem,
  type ProjectRoleSpec,
} from './policy-csv.js';
export { BUILTIN_POLICY_CSV, ADMIN_ROLE } from './builtin-policy.js';
export { rbacMatch } from './glob.js';
