// A cluster made of the real kube-apiserver and etcd binaries (test/scripts/obtain-kube-binaries.sh)
// running as supervised processes on free loopback ports.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startApiserver, auditPolicy, writeStaticTokens } from './apiserver.js';
import { AuditLog } from './audit-log.js';
import { locateKubeBinaries } from './binaries.js';
import type { KubeCluster, StartClusterOptions, StartupTimings } from './cluster.js';
import { createClusterDir, removeStaleDirs } from './cluster-dir.js';
import { ensureControlPlaneRbac } from './control-plane-rbac.js';
import { startEtcd } from './etcd.js';
import { ADMIN_USERNAME, CONTROL_PLANE_USERNAME } from './identities.js';
import { kubeconfigBuilders } from './kubeconfig.js';
import { freePorts, httpGet } from './loopback.js';
import { makeCertificates, writeServiceAccountKeys } from './pki.js';
import { forget, stopSupervised, track, waitUntil } from './supervision.js';

/** One attempt at starting a local cluster (startCluster retries when a port was taken). */
export async function startLocalCluster(options: StartClusterOptions, name: string): Promise<KubeCluster> {
  const log = options.log ?? ((line: string) => console.log(line));
  const binaries = options.binaries ?? locateKubeBinaries();
  const keep = options.keepDir ?? process.env.CAPSTAN_KUBE_KEEP === '1';
  const t0 = performance.now();
  removeStaleDirs();
  const dir = createClusterDir(name, keep);
  const record = track(dir, keep);

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= stopNow());
  const stopNow = async (): Promise<void> => {
    const stopStart = performance.now();
    await stopSupervised(record.procs);
    forget(record);
    if (!keep) rmSync(dir, { recursive: true, force: true });
    if (record.procs.length > 0) {
      log(`[capstan kube] ${name} stopped in ${((performance.now() - stopStart) / 1000).toFixed(2)}s`);
    }
  };

  try {
    const [etcdClientPort, etcdPeerPort, apiPort] = (await freePorts(3)) as [number, number, number];
    const etcd = startEtcd(binaries.etcd, name, dir, { client: etcdClientPort, peer: etcdPeerPort });
    record.procs.push(etcd.proc);
    const etcdReady = etcd.ready.then(() => performance.now() - t0);
    etcdReady.catch(() => {}); // observed below

    // Meanwhile: certificates, tokens, the ServiceAccount signing key, the audit policy.
    const certs = await makeCertificates(dir);
    const { caPem, caData } = certs;
    const tokens = writeStaticTokens(dir);
    const { adminToken, controlPlaneToken } = tokens;
    const serviceAccountKeys = writeServiceAccountKeys(dir);
    const auditPolicyFile = join(dir, 'audit-policy.yaml');
    writeFileSync(auditPolicyFile, auditPolicy());
    const auditLogPath = join(dir, 'audit.log');
    const prepareMs = performance.now() - t0;

    const etcdMs = await etcdReady;
    const apiStart = performance.now();
    const server = `https://127.0.0.1:${apiPort}`;
    const apiserver = startApiserver(binaries.kubeApiserver, {
      dir,
      port: apiPort,
      etcdUrl: etcd.url,
      certs,
      tokenFile: tokens.file,
      serviceAccountKeys,
      auditPolicyFile,
      auditLogPath,
      ...(options.extraApiserverArgs ? { extraArgs: options.extraApiserverArgs } : {}),
    });
    record.procs.push(apiserver.proc);
    await waitUntil(
      'kube-apiserver /readyz',
      async () => (await httpGet(`${server}/readyz`, caPem, adminToken)).status === 200,
      [
        { proc: apiserver.proc, name: 'kube-apiserver', log: apiserver.log },
        { proc: etcd.proc, name: 'etcd', log: etcd.log },
      ],
      options.readyTimeoutMs ?? 90_000,
    );
    const apiserverMs = performance.now() - apiStart;

    const { kubeconfigFor, kubeconfigYamlFor } = kubeconfigBuilders({
      name,
      server,
      caData,
      adminToken,
      controlPlaneToken,
    });
    const adminKubeconfig = kubeconfigFor('admin');

    const rbacStart = performance.now();
    await ensureControlPlaneRbac(adminKubeconfig);
    const rbacMs = performance.now() - rbacStart;

    // flush(): a GET of a namespace that does not exist, by a name nobody else uses, as admin.
    const sentinel = async () => {
      const marker = `capstan-audit-flush-${randomBytes(6).toString('hex')}`;
      await httpGet(`${server}/api/v1/namespaces/${marker}`, caPem, adminToken);
      return marker;
    };

    const timings: StartupTimings = {
      prepareMs,
      etcdMs,
      apiserverMs,
      rbacMs,
      totalMs: performance.now() - t0,
    };
    const s = (ms: number) => (ms / 1000).toFixed(2);
    log(
      `[capstan kube] ${name} ready at ${server} in ${s(timings.totalMs)}s ` +
        `(prepare ${s(prepareMs)}s, etcd healthy at ${s(etcdMs)}s, kube-apiserver ${s(apiserverMs)}s, ` +
        `rbac ${s(rbacMs)}s; kube-apiserver ${binaries.kubeVersion}; dir ${dir})`,
    );

    return {
      name,
      backend: 'binaries',
      server,
      caData,
      caPem,
      adminUsername: ADMIN_USERNAME,
      adminToken,
      controlPlaneUsername: CONTROL_PLANE_USERNAME,
      controlPlaneToken,
      adminKubeconfig,
      controlPlaneKubeconfig: kubeconfigFor('control-plane'),
      kubeconfigFor,
      kubeconfigYamlFor,
      auditLogPath,
      audit: new AuditLog(auditLogPath, sentinel),
      dir,
      timings,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
