export {
  startCluster,
  ADMIN_USERNAME,
  CONTROL_PLANE_USERNAME,
  CONTROL_PLANE_GROUP,
  CONTROL_PLANE_CLUSTER_ROLE,
  type KubeCluster,
  type KubeIdentity,
  type StartClusterOptions,
  type StartupTimings,
} from './cluster.js';
export { chooseBackend, type ClusterBackend, type BackendChoice, type BackendFacts } from './backend.js';
export {
  locateKubeBinaries,
  kubeBinDir,
  pinnedKubeVersion,
  obtainScript,
  KubeBinariesMissingError,
  type KubeBinaries,
} from './binaries.js';
export {
  seedTenant,
  serviceAccountUsername,
  ensureNamespace,
  ensureServiceAccount,
  ensureRole,
  ensureRoleBinding,
  ensureClusterRole,
  ensureClusterRoleBinding,
  requestServiceAccountToken,
  type TenantSpec,
  type TenantServiceAccount,
  type SeededTenant,
} from './seed.js';
export {
  AuditLog,
  readAuditLog,
  effectiveUser,
  type AuditEvent,
  type WaitForAuditOptions,
} from './audit-log.js';
export { startWorkloadControllers, type WorkloadControllers } from './workload-controllers.js';
export { controllerStatus, unpullable, MANUAL_ANNOTATION, EXIT_CODE_ANNOTATION } from './workload-status.js';
