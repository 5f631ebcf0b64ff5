// What the sync service's integration tests share: two real kube-apiservers seeded with tenant
// namespaces and ServiceAccounts of different rights, and builders for the objects they sync.
import { CoreV1Api } from '@kubernetes/client-node';
import { seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import type { ManifestSource } from '../manifests/manifest-source.js';

/** What the stand-in's targetRevision resolves to now (a test moves it as a push would). */
export const head = { sha: 'bee'.padEnd(40, '0') };

/**
 * Stands in for the repo service's manifest generation: renders one ConfigMap named after the
 * commit (the requested one, else what the targetRevision resolves to now).
 */
export const rendered: ManifestSource = {
  async render(_app, request) {
    const sha = request.revision ?? head.sha;
    return {
      revision: sha,
      objects: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `at-${sha.slice(0, 7)}` }, data: {} },
      ],
    };
  },
};

export const cm = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...extra },
  data: { key: name },
});

export const project = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'AppProject',
  metadata: { name, namespace: 'argocd' },
  spec: { sourceRepos: ['*'], ...spec },
});

export const application = (
  name: string,
  projectName: string,
  destination: Record<string, unknown>,
  spec: Record<string, unknown> = {},
) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: { name, namespace: 'argocd' },
  spec: {
    project: projectName,
    source: { repoURL: 'https://git.example.com/apps.git', path: name, targetRevision: 'HEAD' },
    destination,
    ...spec,
  },
});

const writeConfigMaps = [
  {
    apiGroups: [''],
    resources: ['configmaps'],
    // list and watch: the reconciler reads live state as the ServiceAccount too.
    verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
  },
];
const readConfigMaps = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }];

/**
 * Cluster a: namespaces team-a (ServiceAccounts deployer, which may write ConfigMaps, and reader,
 * which may only read them) and team-a-system (deployer). Cluster b: namespace web (deployer).
 */
export async function startTestClusters(): Promise<{
  a: KubeCluster;
  b: KubeCluster;
  stop(): Promise<void>;
}> {
  const [a, b] = await Promise.all([
    startCluster({ name: 'sync-a', log: () => {} }),
    startCluster({ name: 'sync-b', log: () => {} }),
  ]);
  await seedTenant(a.adminKubeconfig, {
    namespace: 'team-a',
    serviceAccounts: ['deployer', { name: 'reader', rules: readConfigMaps }],
    rules: writeConfigMaps,
  });
  await seedTenant(a.adminKubeconfig, {
    namespace: 'team-a-system',
    serviceAccounts: ['deployer'],
    rules: writeConfigMaps,
  });
  await seedTenant(b.adminKubeconfig, {
    namespace: 'web',
    serviceAccounts: ['deployer'],
    rules: writeConfigMaps,
  });
  return { a, b, stop: async () => void (await Promise.all([a.stop(), b.stop()])) };
}

export const configMapsIn = async (cluster: KubeCluster, namespace: string) =>
  (await cluster.adminKubeconfig.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace })).items
    .map((c) => c.metadata!.name!)
    .filter((n) => n !== 'kube-root-ca.crt')
    .sort();

/** The project most tests sync under: deployer in team-a (cluster a) and web (any 127.0.0.1 server), reader for readonly. */
export const teamAProject = (a: KubeCluster) =>
  project('team-a', {
    destinations: [{ server: '*', namespace: '*' }],
    destinationServiceAccounts: [
      { server: a.server, namespace: 'team-a', defaultServiceAccount: 'deployer' },
      { server: 'https://127.0.0.1:*', namespace: 'web', defaultServiceAccount: 'deployer' },
      { server: '*', namespace: 'readonly', defaultServiceAccount: 'team-a:reader' },
    ],
  });
