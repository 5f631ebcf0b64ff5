import { KubeConfig } from '@kubernetes/client-node';
import { ADMIN_USERNAME, CONTROL_PLANE_USERNAME, type KubeIdentity } from './identities.js';

/** What a kubeconfig for any identity of one cluster is made of. */
export interface ClusterEndpoint {
  name: string;
  server: string;
  /** base64 of the CA's PEM */
  caData: string;
  adminToken: string;
  controlPlaneToken: string;
}

/**
 * A client-node KubeConfig and the equivalent YAML (for kubectl or a service under test) for one
 * identity; every identity authenticates with a bearer token.
 */
export function buildKubeConfig(
  cluster: ClusterEndpoint,
  identity: KubeIdentity,
  namespace?: string,
): { kc: KubeConfig; yaml: string } {
  const { name: clusterName, server, caData } = cluster;
  let userName: string;
  let token: string;
  let impersonate: string | undefined;
  if (identity === 'admin') {
    userName = ADMIN_USERNAME;
    token = cluster.adminToken;
  } else if (identity === 'control-plane') {
    userName = CONTROL_PLANE_USERNAME;
    token = cluster.controlPlaneToken;
  } else if ('impersonate' in identity) {
    if (!identity.impersonate) throw new Error('kubeconfigFor: empty impersonate username');
    userName = `${CONTROL_PLANE_USERNAME}-as-${identity.impersonate}`;
    token = cluster.controlPlaneToken;
    impersonate = identity.impersonate;
  } else {
    userName = identity.name ?? 'token';
    token = identity.token;
  }
  const contextName = `${clusterName}/${userName}`;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: clusterName, server, caData, skipTLSVerify: false }],
    users: [{ name: userName, token, ...(impersonate ? { impersonateUser: impersonate } : {}) }],
    contexts: [
      { name: contextName, cluster: clusterName, user: userName, ...(namespace ? { namespace } : {}) },
    ],
    currentContext: contextName,
  });
  const q = (s: string) => JSON.stringify(s);
  const yaml = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${q(clusterName)}`,
    '  cluster:',
    `    server: ${q(server)}`,
    `    certificate-authority-data: ${q(caData)}`,
    'users:',
    `- name: ${q(userName)}`,
    '  user:',
    `    token: ${q(token)}`,
    ...(impersonate ? [`    as: ${q(impersonate)}`] : []),
    'contexts:',
    `- name: ${q(contextName)}`,
    '  context:',
    `    cluster: ${q(clusterName)}`,
    `    user: ${q(userName)}`,
    ...(namespace ? [`    namespace: ${q(namespace)}`] : []),
    `current-context: ${q(contextName)}`,
    '',
  ].join('\n');
  return { kc, yaml };
}

/** kubeconfigFor/kubeconfigYamlFor of a KubeCluster, bound to one cluster's endpoint. */
export function kubeconfigBuilders(cluster: ClusterEndpoint) {
  return {
    kubeconfigFor: (identity: KubeIdentity, o: { namespace?: string } = {}) =>
      buildKubeConfig(cluster, identity, o.namespace).kc,
    kubeconfigYamlFor: (identity: KubeIdentity, o: { namespace?: string } = {}) =>
      buildKubeConfig(cluster, identity, o.namespace).yaml,
  };
}
