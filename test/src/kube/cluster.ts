import type { KubeConfig } from '@kubernetes/client-node';
import type { AuditLog } from './audit-log.js';
import {
  backendChoice,
  chooseBackend,
  dockerAvailable,
  goToolchainAvailable,
  type BackendChoice,
  type ClusterBackend,
} from './backend.js';
import { KubeBinariesMissingError, locateKubeBinaries, type KubeBinaries } from './binaries.js';
import type { KubeIdentity } from './identities.js';
import { startLocalCluster } from './local-cluster.js';
import { StartFailure } from './supervision.js';

export {
  ADMIN_USERNAME,
  CONTROL_PLANE_USERNAME,
  CONTROL_PLANE_GROUP,
  CONTROL_PLANE_CLUSTER_ROLE,
  type KubeIdentity,
} from './identities.js';

export interface StartClusterOptions {
  /** Names the cluster in kubeconfigs, logs and the temporary directory (default `kube-<n>`). */
  name?: string;
  /** Where progress and timing lines go (default console.log); pass () => {} to silence. */
  log?: (line: string) => void;
  /** Give up waiting for readiness after this long (default 90 s; k3s: 180 s). */
  readyTimeoutMs?: number;
  /** Keep the temporary directory (logs, audit log, certs) after stop(); also with CAPSTAN_KUBE_KEEP=1. */
  keepDir?: boolean;
  /** Extra kube-apiserver flags (`--flag=value`), appended after Capstan's. */
  extraApiserverArgs?: string[];
  /** Binaries to use (default: locateKubeBinaries()); implies the `binaries` backend. */
  binaries?: KubeBinaries;
  /** What to run (default: CAPSTAN_KUBE_BACKEND, else `auto`: see chooseBackend()). */
  backend?: BackendChoice;
  /** k3s image (default: CAPSTAN_K3S_IMAGE, else rancher/k3s at the pinned Kubernetes release). */
  k3sImage?: string;
}

export interface StartupTimings {
  /** Ports, keys, certificates and config files. */
  prepareMs: number;
  /** etcd start to healthy (in parallel with prepare); 0 with k3s (no separate etcd). */
  etcdMs: number;
  /** kube-apiserver start to /readyz = ok (k3s: container start to its node controller synced). */
  apiserverMs: number;
  /** Control-plane RBAC (and with k3s, the ServiceAccount identities) created. */
  rbacMs: number;
  /** startCluster() call to returned. */
  totalMs: number;
}

export interface KubeCluster {
  name: string;
  /** What runs it: real kube-apiserver + etcd processes, or a k3s container. */
  backend: ClusterBackend;
  /** https://127.0.0.1:<port> (k3s: https://<docker host>:<mapped port>) */
  server: string;
  /** The cluster CA certificate, base64 of the PEM (a kubeconfig's certificate-authority-data). */
  caData: string;
  /** The cluster CA certificate, PEM. */
  caPem: string;
  /** Who the admin token authenticates as: ADMIN_USERNAME (k3s: a cluster-admin ServiceAccount). */
  adminUsername: string;
  adminToken: string;
  /** Who the control-plane token authenticates as: CONTROL_PLANE_USERNAME (k3s: a ServiceAccount). */
  controlPlaneUsername: string;
  /** The control-plane identity's bearer token (what Capstan stores as a cluster's credentials). */
  controlPlaneToken: string;
  adminKubeconfig: KubeConfig;
  controlPlaneKubeconfig: KubeConfig;
  /** A client-node KubeConfig for an identity. */
  kubeconfigFor(identity: KubeIdentity, options?: { namespace?: string }): KubeConfig;
  /** The same as a kubeconfig YAML document (what kubectl --kubeconfig reads). */
  kubeconfigYamlFor(identity: KubeIdentity, options?: { namespace?: string }): string;
  /** The API server's audit log (JSON lines, level Metadata, every request but its own loopback and health checks). */
  auditLogPath: string;
  audit: AuditLog;
  /** Temporary directory with certs, tokens, etcd data and the logs (apiserver.log, etcd.log). */
  dir: string;
  timings: StartupTimings;
  /** Stops kube-apiserver and etcd (their whole process groups) and removes the temporary directory. */
  stop(): Promise<void>;
}

let clusterCounter = 0;

function binariesPresent(): boolean {
  try {
    locateKubeBinaries();
    return true;
  } catch (err) {
    if (err instanceof KubeBinariesMissingError) return false;
    throw err;
  }
}

async function startBinaries(options: StartClusterOptions, name: string): Promise<KubeCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startLocalCluster(options, name);
    } catch (err) {
      // A port taken between choosing it and binding it: choose again.
      if (err instanceof StartFailure && err.retryable && attempt < 3) continue;
      throw err;
    }
  }
}

/**
 * Starts a real Kubernetes API server (kube-apiserver + its own etcd) on free loopback ports,
 * with its own CA, RBAC authorization, a static token file holding an admin identity and the
 * control-plane identity, ServiceAccount token signing, and an audit log. Several can run side
 * by side. Call stop() when done.
 *
 * Needs the binaries from test/scripts/obtain-kube-binaries.sh (or CAPSTAN_KUBE_BIN_DIR). On a
 * machine with neither them nor Go but with Docker, starts k3s in a container instead.
 */
export async function startCluster(options: StartClusterOptions = {}): Promise<KubeCluster> {
  const name = options.name ?? `kube-${++clusterCounter}`;
  const choice = options.binaries ? 'binaries' : backendChoice(options.backend);
  const backend = await chooseBackend(choice, {
    binariesPresent: choice === 'auto' && binariesPresent(),
    goAvailable: choice === 'auto' && goToolchainAvailable(),
    dockerAvailable,
  });
  if (backend === 'k3s') {
    const { startK3sCluster } = await import('./k3s-cluster.js');
    return startK3sCluster(options, name);
  }
  if (backend === 'none') {
    try {
      locateKubeBinaries();
    } catch (err) {
      if (err instanceof KubeBinariesMissingError) {
        throw new KubeBinariesMissingError(
          `${err.message}\nThis machine has no Go toolchain to build them (install Go, or set GO=/path/to/go) ` +
            'and no container runtime answers for the k3s fallback (start Docker).',
          { cause: err },
        );
      }
      throw err;
    }
  }
  return startBinaries(options, name);
}
