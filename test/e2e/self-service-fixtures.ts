// The manifests of the self-service story (self-service-story.test.ts): the admin's parent projects
// and delivering Application (proposal 001), and what developers push to git.
export const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  greeting: hello\n`;

export const clusterRole = (name: string) =>
  `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: ${name}\nrules: []\n`;

/**
 * What the admin applies: two parents (proposal 001's use cases), the admin's own project that may
 * deliver AppProjects and Applications into the control namespace, and the delivering Application.
 */
export const adminManifests = (o: { server: string; projectsRepo: string }) => `
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: { name: dev-namespaces-only, namespace: argocd }
spec:
  sourceRepos: ['*']
  destinations: [{ server: '${o.server}', namespace: 'dev-*' }]
  clusterResourceWhitelist: [{ group: rbac.authorization.k8s.io, kind: ClusterRole }]
  destinationServiceAccounts:
    - { server: '${o.server}', namespace: 'dev-*', defaultServiceAccount: deployer }
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: { name: no-cluster-resources, namespace: argocd }
spec:
  sourceRepos: ['*']
  destinations: [{ server: '${o.server}', namespace: '*' }]
  clusterResourceWhitelist: []
  destinationServiceAccounts:
    - { server: '${o.server}', namespace: '*', defaultServiceAccount: deployer }
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: { name: platform, namespace: argocd }
spec:
  sourceRepos: ['${o.projectsRepo}']
  destinations: [{ server: '${o.server}', namespace: argocd }]
  namespaceResourceWhitelist:
    - { group: argoproj.io, kind: AppProject }
    - { group: argoproj.io, kind: Application }
    - { group: argoproj.io, kind: ApplicationSet }
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: self-service-projects, namespace: argocd }
spec:
  project: platform
  source: { repoURL: '${o.projectsRepo}', targetRevision: main, path: '.', directory: { recurse: true } }
  destination: { server: '${o.server}', namespace: argocd }
  allowedParentProjects: [dev-namespaces-only, no-cluster-resources]
`;

/** A developer's AppProject under `parent`, for namespace `namespace` of the story's cluster. */
export const devProject = (o: {
  name: string;
  parent: string;
  server: string;
  namespace: string;
  appsRepo: string;
  group: string;
  clusterRoles?: boolean;
}) => `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: { name: ${o.name}, namespace: argocd }
spec:
  parentProject: ${o.parent}
  sourceRepos: ['${o.appsRepo}']
  destinations: [{ server: '${o.server}', namespace: ${o.namespace} }]
${o.clusterRoles ? '  clusterResourceWhitelist: [{ group: rbac.authorization.k8s.io, kind: ClusterRole }]\n' : ''}  destinationServiceAccounts:
    - { server: '${o.server}', namespace: ${o.namespace}, defaultServiceAccount: deployer }
  roles:
    - name: dev
      policies: ['p, proj:${o.name}:dev, applications, *, ${o.name}/*, allow']
      groups: [${o.group}]
`;

/** An Application of `project`, deploying `path` of the developers' repository. */
export const devApplication = (o: {
  name: string;
  project: string;
  server: string;
  namespace: string;
  appsRepo: string;
  path: string;
}) => `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: ${o.name}, namespace: argocd }
spec:
  project: ${o.project}
  source: { repoURL: '${o.appsRepo}', targetRevision: main, path: ${o.path} }
  destination: { server: '${o.server}', namespace: ${o.namespace} }
`;

/** A list ApplicationSet generating addon-a and addon-b into `project`. */
export const addonSet = (o: {
  name: string;
  project: string;
  server: string;
  namespace: string;
  appsRepo: string;
}) => `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: { name: ${o.name}, namespace: argocd }
spec:
  goTemplate: true
  generators: [{ list: { elements: [{ addon: a }, { addon: b }] } }]
  template:
    metadata:
      name: 'addon-{{.addon}}'
      labels: { capstan.test/set: ${o.name} }
    spec:
      project: ${o.project}
      source: { repoURL: '${o.appsRepo}', targetRevision: main, path: guestbook }
      destination: { server: '${o.server}', namespace: ${o.namespace} }
`;
