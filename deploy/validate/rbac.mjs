// Capstan's identity on target clusters (deploy/k3s/capstan-control-plane.yaml) may only impersonate
// ServiceAccounts: one ClusterRole with exactly that rule, bound to its ServiceAccount alone, and no
// other role or binding, so the grant cannot grow unnoticed.
import { check } from './report.mjs';

export function checkControlPlaneRbac(objects) {
  const where = 'k3s/capstan-control-plane.yaml';
  const of = (kind) => objects.filter((o) => o?.kind === kind);
  const roles = of('ClusterRole');
  const onlyRule = [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] }];
  check(
    roles.length === 1 &&
      !roles[0].aggregationRule &&
      JSON.stringify(roles[0].rules) === JSON.stringify(onlyRule),
    `${where}: the control-plane ClusterRole must hold exactly ${JSON.stringify(onlyRule)}, has ${JSON.stringify(roles.map((r) => r.rules))}`,
  );
  const bindings = of('ClusterRoleBinding');
  const subjects = bindings.flatMap((b) => b.subjects ?? []);
  check(
    bindings.length === 1 &&
      bindings[0].roleRef?.kind === 'ClusterRole' &&
      bindings[0].roleRef?.name === roles[0]?.metadata?.name &&
      subjects.length === 1 &&
      subjects[0].kind === 'ServiceAccount' &&
      subjects[0].name === 'capstan-control-plane',
    `${where}: one ClusterRoleBinding of that role to ServiceAccount capstan-control-plane alone`,
  );
  const kinds = objects.map((o) => o?.kind).filter(Boolean);
  const allowed = new Set(['ServiceAccount', 'Secret', 'ClusterRole', 'ClusterRoleBinding']);
  check(
    kinds.every((k) => allowed.has(k)),
    `${where}: unexpected kinds ${kinds.filter((k) => !allowed.has(k)).join(', ')} (Roles or RoleBindings grant more)`,
  );
}
