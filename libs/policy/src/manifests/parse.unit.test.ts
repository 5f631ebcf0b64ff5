import { describe, expect, it } from 'vitest';
import { formatIssue } from '../issues.js';
import { validateAppProject, validateApplication } from '../project/validate.js';
import { ManifestErrors, parseArgoManifests } from './parse.js';

function errorsOf(text: string): string[] {
  try {
    parseArgoManifests(text, 'in.yaml');
  } catch (err) {
    if (err instanceof ManifestErrors) return err.errors.map((e) => e.message);
    throw err;
  }
  throw new Error('expected ManifestErrors');
}

const project = (spec: string) => `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: { name: team-a, namespace: argocd }
spec:
${spec}`;

describe('reading Argo CD manifests (several documents per file)', () => {
  it('given the DESIGN example, when parsing, then the project and the application are read as Argo CD writes them', () => {
    const m = parseArgoManifests(
      `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: { name: team-a, namespace: argocd, finalizers: [resources-finalizer.argocd.argoproj.io] }
spec:
  parentProject: tenants
  sourceRepos: ['https://git.example.com/team-a/*', '!https://git.example.com/team-a/secret']
  destinations: [{ server: 'https://kubernetes.default.svc', namespace: 'team-a-*' }]
  clusterResourceWhitelist: []
  namespaceResourceBlacklist: [{ group: '', kind: ResourceQuota }]
  destinationServiceAccounts:
    - { server: 'https://kubernetes.default.svc', namespace: team-a-prod, defaultServiceAccount: prod-deployer }
    - { server: '*', namespace: '*', defaultServiceAccount: 'team-a-system:deployer' }
---
# an empty document is skipped
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: guestbook, namespace: argocd }
spec:
  project: team-a
  source: { repoURL: 'https://git.example.com/team-a/apps.git', targetRevision: HEAD, path: guestbook }
  destination: { server: 'https://kubernetes.default.svc', namespace: team-a-prod }
  syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: [CreateNamespace=true] }
status: { sync: { status: Synced } }
`,
      'design.yaml',
    );
    expect(m.projects).toHaveLength(1);
    expect(m.projects[0]!.spec.destinationServiceAccounts).toHaveLength(2);
    expect(m.projects[0]!.spec.clusterResourceWhitelist).toEqual([]);
    expect(m.applications[0]!.spec.syncPolicy?.automated?.prune).toBe(true);
  });

  it('given a cluster Secret, when parsing, then only its name, server and project are read', () => {
    const m = parseArgoManifests(
      `apiVersion: v1
kind: Secret
metadata: { name: prod, namespace: argocd, labels: { argocd.argoproj.io/secret-type: cluster } }
type: Opaque
stringData: { name: prod, server: 'https://prod.example.com:6443', config: '{"bearerToken":"s3cr3t"}' }
---
apiVersion: v1
kind: Secret
metadata: { name: stage, labels: { argocd.argoproj.io/secret-type: cluster } }
data: { name: ${Buffer.from('stage').toString('base64')}, server: ${Buffer.from('https://stage.example.com').toString('base64')} }
`,
      'clusters.yaml',
    );
    expect(m.clusters).toEqual([
      { name: 'prod', server: 'https://prod.example.com:6443' },
      { name: 'stage', server: 'https://stage.example.com' },
    ]);
    expect(JSON.stringify(m)).not.toContain('s3cr3t');
  });

  it('given invalid YAML, when parsing, then the document and the YAML problem are named', () => {
    const [msg] = errorsOf('apiVersion: argoproj.io/v1alpha1\nkind: [AppProject\n');
    expect(msg).toMatch(/^in\.yaml: document 1: invalid YAML/);
  });

  it('given objects without apiVersion, kind or name, when parsing, then each missing field is named', () => {
    const [msg] = errorsOf('metadata: {}\nspec: {}\n');
    expect(msg).toBe(
      'in.yaml: document 1 (object): apiVersion: required; kind: required; metadata.name: required',
    );
  });

  it('given an unknown kind, when parsing, then it is refused with the kind', () => {
    const [msg] = errorsOf('apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n');
    expect(msg).toContain('document 1 (ConfigMap x): kind: unsupported kind "ConfigMap"');
  });

  it('given the same object twice, when parsing, then the duplicate is refused', () => {
    const doc = project('  sourceRepos: ["*"]');
    const [msg] = errorsOf(`${doc}\n---\n${doc}`);
    expect(msg).toContain(
      'document 2 (AppProject team-a): metadata.name: duplicate: AppProject argocd/team-a is defined more than once',
    );
  });

  it('given a misspelt field, when parsing, then it is an unknown field rather than a silently ignored rule', () => {
    const [msg] = errorsOf(project('  destinationServiceAcounts: []'));
    expect(msg).toContain('spec.destinationServiceAcounts: unknown field');
  });

  it('given ignoreDifferences and retry written wrong, when parsing, then each field path says what was expected', () => {
    const errors = errorsOf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: web, namespace: argocd }
spec:
  project: team-a
  source: { repoURL: 'https://git.example.com/a.git', path: web }
  destination: { server: 'https://kubernetes.default.svc', namespace: a }
  ignoreDifferences:
    - { group: apps, jsonPointers: [spec/replicas], jqPathExpression: ['.x'] }
  syncPolicy:
    retry: { limit: 5, backoff: { duration: 5 minutes, factor: 0 } }
`).join('\n');
    expect(errors).toContain('spec.ignoreDifferences[0].kind: required');
    expect(errors).toContain('spec.ignoreDifferences[0].jsonPointers[0]: a JSON pointer starts with "/"');
    expect(errors).toContain('spec.ignoreDifferences[0].jqPathExpression: unknown field');
    expect(errors).toMatch(/spec\.syncPolicy\.retry\.backoff\.duration/);
    expect(errors).toMatch(/spec\.syncPolicy\.retry\.backoff\.factor: must be at least 1/);
  });

  it("given Argo CD's ignoreDifferences, retry and managedNamespaceMetadata, when parsing, then they are read as written", () => {
    const m = parseArgoManifests(
      `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: web, namespace: argocd }
spec:
  project: team-a
  source: { repoURL: 'https://git.example.com/a.git', path: web }
  destination: { server: 'https://kubernetes.default.svc', namespace: a }
  ignoreDifferences:
    - { group: apps, kind: Deployment, jsonPointers: [/spec/replicas], managedFieldsManagers: [kube-controller-manager] }
  syncPolicy:
    syncOptions: [CreateNamespace=true]
    managedNamespaceMetadata: { labels: { team: a } }
    retry: { limit: 5, backoff: { duration: 5s, factor: 2, maxDuration: 3m } }
`,
      'in.yaml',
    );
    const spec = m.applications[0]!.spec;
    expect(spec.ignoreDifferences?.[0]).toMatchObject({
      kind: 'Deployment',
      jsonPointers: ['/spec/replicas'],
    });
    expect(spec.syncPolicy?.retry?.backoff).toEqual({ duration: '5s', factor: 2, maxDuration: '3m' });
    expect(spec.syncPolicy?.managedNamespaceMetadata?.labels).toEqual({ team: 'a' });
  });

  it('given the proposal\'s `destinations: ["*"]`, when parsing, then it is refused: Argo CD destinations are objects', () => {
    const [msg] = errorsOf(project("  destinations: ['*']"));
    expect(msg).toContain('spec.destinations[0]: expected object, got string');
  });

  it('given several broken documents, when parsing, then every one is reported', () => {
    const errors = errorsOf(
      `${project('  sourceRepos: 5')}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: { name: a }\nspec: { destination: {} }\n`,
    );
    expect(errors).toHaveLength(2);
    expect(errors[0]).toContain('spec.sourceRepos: expected array, got number');
    expect(errors[1]).toContain('spec.project: required');
  });
});

describe('write-time validation of destinationServiceAccounts (docs/decisions.md)', () => {
  const base = { apiVersion: 'argoproj.io/v1alpha1', kind: 'AppProject', metadata: { name: 'team-a' } };
  const issuesFor = (dsa: unknown[]) => {
    const r = validateAppProject({ ...base, spec: { destinationServiceAccounts: dsa } });
    return r.ok ? [] : r.issues.map(formatIssue);
  };
  const ok = { server: '*', namespace: 'a', defaultServiceAccount: 'sa' };

  it('given a namespace pattern that does not compile, when validating, then the exact field path is given', () => {
    expect(issuesFor([ok, { ...ok, namespace: 'b' }, { ...ok, namespace: 'team-[' }])).toEqual([
      'spec.destinationServiceAccounts[2].namespace: invalid glob "team-[": unclosed "["',
    ]);
  });

  it.each([
    [
      { server: '!https://x', namespace: 'a', defaultServiceAccount: 'sa' },
      'spec.destinationServiceAccounts[0].server: invalid glob "!https://x": "!" (negation) is not allowed here',
    ],
    [
      { server: '*', namespace: '!kube-system', defaultServiceAccount: 'sa' },
      'spec.destinationServiceAccounts[0].namespace: invalid glob "!kube-system": "!" (negation) is not allowed here',
    ],
    [
      { server: '{a,b', namespace: 'a', defaultServiceAccount: 'sa' },
      'spec.destinationServiceAccounts[0].server: invalid glob "{a,b": unclosed "{"',
    ],
    [
      { server: '*', namespace: 'a', defaultServiceAccount: '   ' },
      'spec.destinationServiceAccounts[0].defaultServiceAccount: "   " must not be blank',
    ],
    [
      { server: '*', namespace: 'a', defaultServiceAccount: 'deploy*' },
      'spec.destinationServiceAccounts[0].defaultServiceAccount: "deploy*" must not contain "*" (none of !*[]{}\\/ is allowed)',
    ],
    [
      { server: '*', namespace: 'a', defaultServiceAccount: 'ns/sa' },
      'spec.destinationServiceAccounts[0].defaultServiceAccount: "ns/sa" must not contain "/" (none of !*[]{}\\/ is allowed)',
    ],
    [
      { server: '*', namespace: 'a', defaultServiceAccount: 'a:b:c' },
      'spec.destinationServiceAccounts[0].defaultServiceAccount: "a:b:c" must be "name" or "namespace:name" (more than one ":")',
    ],
    [
      { server: '*', namespace: 'a', defaultServiceAccount: 'Team_A:sa' },
      'spec.destinationServiceAccounts[0].defaultServiceAccount: "Team_A:sa" namespace "Team_A" must be a DNS label (lowercase letters, digits and "-", starting and ending with a letter or digit)',
    ],
    [
      { server: '*', namespace: 'a', defaultServiceAccount: ':sa' },
      'spec.destinationServiceAccounts[0].defaultServiceAccount: ":sa" namespace "" must not be empty',
    ],
    [
      { server: '*', namespace: 'a', defaultServiceAccount: 'Deployer' },
      'spec.destinationServiceAccounts[0].defaultServiceAccount: "Deployer" name "Deployer" must be a DNS subdomain (lowercase letters, digits, "-" and ".", each part starting and ending with a letter or digit)',
    ],
  ])('given %j, when validating, then %s', (dsa, expected) => {
    expect(issuesFor([dsa])).toEqual([expected]);
  });

  it('given two entries with the same server and namespace, when validating, then the duplicate names the first', () => {
    expect(issuesFor([ok, { ...ok, defaultServiceAccount: 'other' }])).toEqual([
      'spec.destinationServiceAccounts[1]: duplicates spec.destinationServiceAccounts[0] (same server "*" and namespace "a")',
    ]);
  });

  it('given a missing defaultServiceAccount and an unknown field, when validating, then both paths are named', () => {
    expect(issuesFor([{ server: '*', namespace: 'a', serviceAccount: 'x' }])).toEqual([
      'spec.destinationServiceAccounts[0].defaultServiceAccount: required',
      'spec.destinationServiceAccounts[0].serviceAccount: unknown field',
    ]);
  });

  it('given valid entries, including a dotted ServiceAccount name Kubernetes accepts, when validating, then the project is accepted', () => {
    expect(
      issuesFor([
        ok,
        {
          server: 'https://*.example.com',
          namespace: '{dev,prod}-*',
          defaultServiceAccount: 'ns:deployer.v2',
        },
      ]),
    ).toEqual([]);
  });
});

describe('write-time validation of the rest of the project and of Applications', () => {
  it('given destinations and sourceRepos with mistakes, when validating, then each is named', () => {
    const r = validateAppProject({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AppProject',
      metadata: { name: 'p' },
      spec: {
        sourceRepos: ['!*', 'https://a/*', 'https://a/*'],
        destinations: [{ namespace: 'x' }, { server: '*', namespace: '[' }],
        clusterResourceWhitelist: [{ group: '', kind: '' }],
      },
    });
    expect(r.ok ? [] : r.issues.map(formatIssue)).toEqual([
      'spec.sourceRepos[0]: "!*" denies every repository; remove the project\'s sourceRepos instead',
      'spec.sourceRepos[2]: duplicate source repository "https://a/*"',
      'spec.destinations[0]: server or name is required',
      'spec.destinations[1].namespace: invalid glob "[": unclosed "["',
      'spec.clusterResourceWhitelist[0].kind: must not be empty',
    ]);
  });

  it('given an Application naming its cluster twice and no source, when validating, then both are named', () => {
    const r = validateApplication({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'a' },
      spec: { project: 'p', destination: { server: 'https://x', name: 'x' }, allowedParentProjects: ['['] },
    });
    expect(r.ok ? [] : r.issues.map(formatIssue)).toEqual([
      'spec.destination: server and name are both set; name the cluster by one of them',
      'spec.source: source or sources is required',
      'spec.allowedParentProjects[0]: invalid glob "[": unclosed "["',
    ]);
  });
});
