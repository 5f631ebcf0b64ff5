// Argo CD's casbin model (assets/model.conf): requests are (subject, resource, action, object),
// policies add an effect, roles nest through `g`, and one deny anywhere beats any allow. Argo CD
// matches resource, action and object as globs; so does Capstan (argoGlob is glob.ts, @capstan/glob;
// it is not casbin's own globMatch, which lets '*' stop at '/').
export const RBAC_MODEL = `
[request_definition]
r = sub, res, act, obj

[policy_definition]
p = sub, res, act, obj, eft

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = g(r.sub, p.sub) && argoGlob(r.res, p.res) && argoGlob(r.act, p.act) && argoGlob(r.obj, p.obj)
`;
