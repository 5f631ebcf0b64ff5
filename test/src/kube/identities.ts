/** Username of the admin identity (group system:masters): for test setup only. */
export const ADMIN_USERNAME = 'capstan-admin';
/** Username of the control-plane identity: may only impersonate ServiceAccounts (and ask what it may do). */
export const CONTROL_PLANE_USERNAME = 'capstan-control-plane';
/** Group of the control-plane identity. */
export const CONTROL_PLANE_GROUP = 'capstan:control-plane';
/** ClusterRole (and ClusterRoleBinding) that gives the control-plane identity its only rights. */
export const CONTROL_PLANE_CLUSTER_ROLE = 'capstan:control-plane-impersonator';

/**
 * Who a kubeconfig authenticates as:
 * - `'admin'`: system:masters, for setting tests up;
 * - `'control-plane'`: the control-plane identity, no impersonation;
 * - `{ impersonate }`: the control-plane identity impersonating a user, e.g.
 *   `system:serviceaccount:team-a:deployer` (the `as:` of a kubeconfig, the Impersonate-User header);
 * - `{ token }`: any bearer token (e.g. a ServiceAccount token from requestServiceAccountToken()).
 */
export type KubeIdentity =
  'admin' | 'control-plane' | { impersonate: string } | { token: string; name?: string };
