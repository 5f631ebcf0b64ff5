import { RbacAuthorizationV1Api, type KubeConfig, type RbacV1Subject } from '@kubernetes/client-node';
import { CONTROL_PLANE_CLUSTER_ROLE, CONTROL_PLANE_USERNAME } from './identities.js';

/** The control-plane identity of a local cluster: the static-token user. */
export const CONTROL_PLANE_USER_SUBJECT: RbacV1Subject = {
  apiGroup: 'rbac.authorization.k8s.io',
  kind: 'User',
  name: CONTROL_PLANE_USERNAME,
};

/**
 * Creates ClusterRole/Binding `capstan:control-plane-impersonator`: the control-plane identity's
 * only right is to impersonate ServiceAccounts (as deploy/k3s/capstan-control-plane.yaml grants).
 * Everything it writes, it writes as an impersonated ServiceAccount, so the cluster's RBAC decides;
 * asking what it may do (SelfSubjectAccessReview) is every authenticated user's right already
 * (ClusterRole system:basic-user).
 */
export async function ensureControlPlaneRbac(
  admin: KubeConfig,
  subject: RbacV1Subject = CONTROL_PLANE_USER_SUBJECT,
): Promise<void> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const labels = { 'app.kubernetes.io/part-of': 'capstan' };
  await rbac.createClusterRole({
    body: {
      metadata: { name: CONTROL_PLANE_CLUSTER_ROLE, labels },
      rules: [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] }],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: CONTROL_PLANE_CLUSTER_ROLE, labels },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: CONTROL_PLANE_CLUSTER_ROLE,
      },
      subjects: [subject],
    },
  });
}
