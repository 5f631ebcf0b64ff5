// Argo CD's built-in roles (assets/builtin-policy.csv) for Capstan's resources. `audit` is Capstan's
// own resource (audit queries and chain verification): admins only, since rows name every actor.
// `deadletters` too (capstan admin dlq list/replay): a dead letter may carry any tenant's data.
export const BUILTIN_POLICY_CSV = `
p, role:readonly, applications, get, */*, allow
p, role:readonly, applicationsets, get, */*, allow
p, role:readonly, clusters, get, *, allow
p, role:readonly, repositories, get, *, allow
p, role:readonly, projects, get, *, allow
p, role:readonly, accounts, get, *, allow

p, role:admin, applications, create, */*, allow
p, role:admin, applications, update, */*, allow
p, role:admin, applications, delete, */*, allow
p, role:admin, applications, sync, */*, allow
p, role:admin, applications, override, */*, allow
p, role:admin, applicationsets, get, */*, allow
p, role:admin, applicationsets, create, */*, allow
p, role:admin, applicationsets, update, */*, allow
p, role:admin, applicationsets, delete, */*, allow
p, role:admin, clusters, create, *, allow
p, role:admin, clusters, update, *, allow
p, role:admin, clusters, delete, *, allow
p, role:admin, repositories, create, *, allow
p, role:admin, repositories, update, *, allow
p, role:admin, repositories, delete, *, allow
p, role:admin, projects, create, *, allow
p, role:admin, projects, update, *, allow
p, role:admin, projects, delete, *, allow
p, role:admin, accounts, create, *, allow
p, role:admin, accounts, update, *, allow
p, role:admin, accounts, delete, *, allow
p, role:admin, audit, get, *, allow
p, role:admin, settings, get, *, allow
p, role:admin, settings, update, *, allow
p, role:admin, deadletters, get, *, allow
p, role:admin, deadletters, replay, *, allow

g, role:admin, role:readonly
g, admin, role:admin
`;

/** The role whose members may edit what widens a tenant's reach (destinationServiceAccounts, parentProject). */
export const ADMIN_ROLE = 'role:admin';
