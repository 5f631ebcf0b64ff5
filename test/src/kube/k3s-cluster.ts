// A cluster made of k3s in a container (testcontainers), for machines with Docker but neither the
// real binaries nor a Go toolchain to build them. Exercised only where Docker runs.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { K3sContainer } from '@testcontainers/k3s';
import { getContainerRuntimeClient } from 'testcontainers';
import { auditPolicy } from './apiserver.js';
import { AuditLog } from './audit-log.js';
import { pinnedKubeVersion } from './binaries.js';
import type { KubeCluster, StartClusterOptions } from './cluster.js';
import { createClusterDir, removeStaleDirs } from './cluster-dir.js';
import { ensureControlPlaneRbac } from './control-plane-rbac.js';
import { kubeconfigBuilders } from './kubeconfig.js';
import { httpGet } from './loopback.js';
import {
  ensureClusterRoleBinding,
  ensureNamespace,
  ensureServiceAccount,
  requestServiceAccountToken,
  serviceAccountUsername,
} from './seed.js';

/** Namespace of the ServiceAccounts that stand for the admin and control-plane identities. */
export const K3S_IDENTITY_NAMESPACE = 'capstan-system';
const ADMIN_SA = 'capstan-admin';
const CONTROL_PLANE_SA = 'capstan-control-plane';
const AUDIT_POLICY_PATH = '/etc/capstan/audit-policy.yaml';
const AUDIT_LOG_PATH = '/var/log/capstan/audit.log';
/** Tokens outlive any test run; the container does not outlive the run. */
const TOKEN_SECONDS = 24 * 3600;

/** rancher/k3s at the Kubernetes release the binaries are pinned to, unless told otherwise. */
export function k3sImage(options: StartClusterOptions, env: NodeJS.ProcessEnv = process.env): string {
  return options.k3sImage ?? env.CAPSTAN_K3S_IMAGE ?? `rancher/k3s:${pinnedKubeVersion()}-k3s1`;
}

/** Retries the first calls while k3s finishes bootstrapping RBAC after its readiness log line. */
async function retrying<T>(what: string, call: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`k3s: ${what} kept failing`, { cause: err });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export async function startK3sCluster(options: StartClusterOptions, name: string): Promise<KubeCluster> {
  const log = options.log ?? ((line: string) => console.log(line));
  const keep = options.keepDir ?? process.env.CAPSTAN_KUBE_KEEP === '1';
  const image = k3sImage(options);
  const t0 = performance.now();
  // The serving certificate must name the host the mapped port is reached on (a remote Docker host too).
  const runtime = await getContainerRuntimeClient().catch((err: unknown) => {
    throw new Error(`k3s backend: no container runtime answers (start Docker): ${String(err)}`, {
      cause: err,
    });
  });
  const host = runtime.info.containerRuntime.host;
  removeStaleDirs();
  const dir = createClusterDir(name, keep);
  const apiserverArg = (flag: string) => `--kube-apiserver-arg=${flag.replace(/^--/, '')}`;
  const prepareMs = performance.now() - t0;

  const apiStart = performance.now();
  const container = await new K3sContainer(image)
    .withCommand([
      'server',
      '--disable=traefik',
      '--disable=servicelb',
      '--disable=metrics-server',
      `--tls-san=${host}`,
      apiserverArg(`audit-policy-file=${AUDIT_POLICY_PATH}`),
      apiserverArg(`audit-log-path=${AUDIT_LOG_PATH}`),
      apiserverArg('audit-log-format=json'),
      apiserverArg('audit-log-mode=blocking'),
      ...(options.extraApiserverArgs ?? []).map(apiserverArg),
    ])
    .withCopyContentToContainer([
      {
        // k3s's own components would drown what tests look for.
        content: auditPolicy({
          users: ['system:kube-controller-manager', 'system:kube-scheduler', 'system:k3s-controller'],
          groups: ['system:nodes', 'system:serviceaccounts:kube-system'],
        }),
        target: AUDIT_POLICY_PATH,
      },
    ])
    .withStartupTimeout(options.readyTimeoutMs ?? 180_000)
    .start()
    .catch((err: unknown) => {
      if (!keep) rmSync(dir, { recursive: true, force: true });
      throw err;
    });
  const apiserverMs = performance.now() - apiStart;

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await container.stop();
      if (!keep) rmSync(dir, { recursive: true, force: true });
      log(`[capstan kube] ${name} (k3s) stopped`);
    })());

  try {
    // k3s's own kubeconfig (client certificate, system:masters) is used only to create the identities.
    const bootstrap = new KubeConfig();
    bootstrap.loadFromString(container.getKubeConfig());
    const k3sCluster = bootstrap.getCurrentCluster();
    if (!k3sCluster?.caData) throw new Error('k3s: its kubeconfig has no certificate-authority-data');
    const { server, caData } = k3sCluster;
    const caPem = Buffer.from(caData, 'base64').toString('utf8');

    const rbacStart = performance.now();
    const ns = K3S_IDENTITY_NAMESPACE;
    await retrying('creating the identity namespace', () => ensureNamespace(bootstrap, ns));
    await ensureServiceAccount(bootstrap, ns, ADMIN_SA);
    await ensureServiceAccount(bootstrap, ns, CONTROL_PLANE_SA);
    await ensureClusterRoleBinding(bootstrap, 'capstan:test-admin', 'cluster-admin', [
      { kind: 'ServiceAccount', name: ADMIN_SA, namespace: ns },
    ]);
    await ensureControlPlaneRbac(bootstrap, {
      kind: 'ServiceAccount',
      name: CONTROL_PLANE_SA,
      namespace: ns,
    });
    const adminToken = await requestServiceAccountToken(bootstrap, ns, ADMIN_SA, TOKEN_SECONDS);
    const controlPlaneToken = await requestServiceAccountToken(
      bootstrap,
      ns,
      CONTROL_PLANE_SA,
      TOKEN_SECONDS,
    );
    const rbacMs = performance.now() - rbacStart;

    const { kubeconfigFor, kubeconfigYamlFor } = kubeconfigBuilders({
      name,
      server,
      caData,
      adminToken,
      controlPlaneToken,
    });

    // The log is written inside the container: mirror it byte for byte, so marks stay offsets.
    const auditLogPath = join(dir, 'audit.log');
    const refresh = async () => {
      const res = await container.exec(['cat', AUDIT_LOG_PATH]);
      if (res.exitCode === 0) writeFileSync(auditLogPath, res.stdout);
    };
    const sentinel = async () => {
      const marker = `capstan-audit-flush-${randomBytes(6).toString('hex')}`;
      await httpGet(`${server}/api/v1/namespaces/${marker}`, caPem, adminToken);
      return marker;
    };

    const totalMs = performance.now() - t0;
    const s = (ms: number) => (ms / 1000).toFixed(2);
    log(
      `[capstan kube] ${name} (k3s ${image}) ready at ${server} in ${s(totalMs)}s ` +
        `(container ${s(apiserverMs)}s, identities ${s(rbacMs)}s; dir ${dir})`,
    );
    return {
      name,
      backend: 'k3s',
      server,
      caData,
      caPem,
      adminUsername: serviceAccountUsername(ns, ADMIN_SA),
      adminToken,
      controlPlaneUsername: serviceAccountUsername(ns, CONTROL_PLANE_SA),
      controlPlaneToken,
      adminKubeconfig: kubeconfigFor('admin'),
      controlPlaneKubeconfig: kubeconfigFor('control-plane'),
      kubeconfigFor,
      kubeconfigYamlFor,
      auditLogPath,
      audit: new AuditLog(auditLogPath, sentinel, refresh),
      dir,
      timings: { prepareMs, etcdMs: 0, apiserverMs, rbacMs, totalMs },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
