import {
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1PolicyRule,
  type RbacV1Subject,
} from '@kubernetes/client-node';

/** The Kubernetes username of a ServiceAccount: `system:serviceaccount:<namespace>:<name>`. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

/** Creates, or when it exists already, ignores (`keep`) or replaces (`replace`) an object. */
async function createOr<T>(create: () => Promise<T>, onConflict: 'keep' | (() => Promise<T>)): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
    if (onConflict !== 'keep') await onConflict();
  }
}

const managedBy = { 'app.kubernetes.io/managed-by': 'capstan-test' };

export async function ensureNamespace(
  admin: KubeConfig,
  name: string,
  labels: Record<string, string> = {},
): Promise<void> {
  const core = admin.makeApiClient(CoreV1Api);
  await createOr(
    () => core.createNamespace({ body: { metadata: { name, labels: { ...managedBy, ...labels } } } }),
    'keep',
  );
}

export async function ensureServiceAccount(
  admin: KubeConfig,
  namespace: string,
  name: string,
): Promise<void> {
  const core = admin.makeApiClient(CoreV1Api);
  await createOr(
    () => core.createNamespacedServiceAccount({ namespace, body: { metadata: { name, labels: managedBy } } }),
    'keep',
  );
}

export async function ensureRole(
  admin: KubeConfig,
  namespace: string,
  name: string,
  rules: V1PolicyRule[],
): Promise<void> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const body = { metadata: { name, namespace, labels: managedBy }, rules };
  await createOr(
    () => rbac.createNamespacedRole({ namespace, body }),
    () => rbac.replaceNamespacedRole({ name, namespace, body }),
  );
}

export async function ensureRoleBinding(
  admin: KubeConfig,
  namespace: string,
  name: string,
  roleRef: { kind: 'Role' | 'ClusterRole'; name: string },
  subjects: RbacV1Subject[],
): Promise<void> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const body = {
    metadata: { name, namespace, labels: managedBy },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
    subjects,
  };
  // roleRef is immutable: replace by delete + create when it changed.
  await createOr(
    () => rbac.createNamespacedRoleBinding({ namespace, body }),
    async () => {
      const current = await rbac.readNamespacedRoleBinding({ name, namespace });
      if (current.roleRef.kind !== roleRef.kind || current.roleRef.name !== roleRef.name) {
        await rbac.deleteNamespacedRoleBinding({ name, namespace });
        return rbac.createNamespacedRoleBinding({ namespace, body });
      }
      return rbac.replaceNamespacedRoleBinding({ name, namespace, body });
    },
  );
}

export async function ensureClusterRole(
  admin: KubeConfig,
  name: string,
  rules: V1PolicyRule[],
): Promise<void> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const body = { metadata: { name, labels: managedBy }, rules };
  await createOr(
    () => rbac.createClusterRole({ body }),
    () => rbac.replaceClusterRole({ name, body }),
  );
}

export async function ensureClusterRoleBinding(
  admin: KubeConfig,
  name: string,
  clusterRole: string,
  subjects: RbacV1Subject[],
): Promise<void> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const body = {
    metadata: { name, labels: managedBy },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
    subjects,
  };
  await createOr(
    () => rbac.createClusterRoleBinding({ body }),
    () => rbac.replaceClusterRoleBinding({ name, body }),
  );
}

/** A ServiceAccount of a tenant: a name bound to the tenant's shared `rules`, or a name with rules of its own. */
export type TenantServiceAccount = string | { name: string; rules: V1PolicyRule[] };

export interface TenantSpec {
  namespace: string;
  /** ServiceAccounts to create in the namespace. */
  serviceAccounts?: TenantServiceAccount[];
  /** Rules of the namespace's Role `roleName`, bound to every ServiceAccount given by name alone. */
  rules?: V1PolicyRule[];
  /** Name of the shared Role and its RoleBinding (default `capstan-tenant`). */
  roleName?: string;
  labels?: Record<string, string>;
  /**
   * Also create the namespace's `default` ServiceAccount (default true). A real cluster's
   * controller manager does that; these test clusters run only the API server.
   */
  defaultServiceAccount?: boolean;
}

export interface SeededTenant {
  namespace: string;
  /** Kubernetes usernames by ServiceAccount name, e.g. `{ deployer: 'system:serviceaccount:team-a:deployer' }`. */
  usernames: Record<string, string>;
}

/**
 * Seeds a tenant namespace, as admin: the namespace, its ServiceAccounts, a Role with `rules`
 * bound to the ServiceAccounts named alone, and a Role + RoleBinding per ServiceAccount that
 * brings its own rules (named after it). Idempotent: seeding again updates the rules.
 *
 * ```ts
 * await seedTenant(cluster.adminKubeconfig, {
 *   namespace: 'team-a',
 *   serviceAccounts: ['deployer', { name: 'reader', rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] }],
 *   rules: [{ apiGroups: ['', 'apps'], resources: ['configmaps', 'deployments'], verbs: ['get', 'list', 'create', 'update', 'patch'] }],
 * });
 * ```
 */
export async function seedTenant(admin: KubeConfig, spec: TenantSpec): Promise<SeededTenant> {
  const { namespace } = spec;
  const roleName = spec.roleName ?? 'capstan-tenant';
  await ensureNamespace(admin, namespace, spec.labels);
  const accounts = spec.serviceAccounts ?? [];
  const names = accounts.map((a) => (typeof a === 'string' ? a : a.name));
  if (spec.defaultServiceAccount ?? true) {
    if (!names.includes('default')) await ensureServiceAccount(admin, namespace, 'default');
  }
  await Promise.all(names.map((n) => ensureServiceAccount(admin, namespace, n)));

  const shared = accounts.filter((a): a is string => typeof a === 'string');
  if (spec.rules && spec.rules.length > 0) {
    await ensureRole(admin, namespace, roleName, spec.rules);
    await ensureRoleBinding(
      admin,
      namespace,
      roleName,
      { kind: 'Role', name: roleName },
      shared.map((n) => ({ kind: 'ServiceAccount', name: n, namespace })),
    );
  }
  for (const a of accounts) {
    if (typeof a === 'string') continue;
    await ensureRole(admin, namespace, a.name, a.rules);
    await ensureRoleBinding(admin, namespace, a.name, { kind: 'Role', name: a.name }, [
      { kind: 'ServiceAccount', name: a.name, namespace },
    ]);
  }
  return {
    namespace,
    usernames: Object.fromEntries(names.map((n) => [n, serviceAccountUsername(namespace, n)])),
  };
}

/** A bound token for a ServiceAccount (TokenRequest API), for tests that act as it directly. */
export async function requestServiceAccountToken(
  admin: KubeConfig,
  namespace: string,
  name: string,
  expirationSeconds = 3600,
): Promise<string> {
  const core = admin.makeApiClient(CoreV1Api);
  const res = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds } },
  });
  const token = res.status?.token;
  if (!token) throw new Error(`no token returned for ServiceAccount ${namespace}/${name}`);
  return token;
}
