// Starts real Kubernetes API servers on loopback for the local demo and keeps them running until
// SIGINT/SIGTERM. For each cluster it writes, into the output directory:
//   <name>.admin.kubeconfig          system:masters, for looking around with kubectl
//   <name>.control-plane.kubeconfig  the identity Capstan registers the cluster with
//   clusters.json                    [{ name, server, caData, controlPlaneToken, auditLogPath }]
// These API servers run no kube-controller-manager and no kubelet, so each gets the workload
// controllers' stand-in (workload-controllers.ts): Deployments become available, Jobs complete.
//
// Usage: node test/dist/kube/up.js [--clusters in-cluster,remote] [--out .capstan/kube]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startCluster, type KubeCluster } from './cluster.js';
import { startWorkloadControllers, type WorkloadControllers } from './workload-controllers.js';

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: 'in-cluster' },
    out: { type: 'string', default: '.capstan/kube' },
  },
});
const names = (values.clusters ?? 'in-cluster')
  .split(',')
  .map((n) => n.trim())
  .filter(Boolean);
const out = resolve(values.out ?? '.capstan/kube');
mkdirSync(out, { recursive: true });

const clusters: KubeCluster[] = [];
const controllers: WorkloadControllers[] = [];
const stopAll = async () => {
  await Promise.all(controllers.map((c) => c.stop()));
  await Promise.all(clusters.map((c) => c.stop()));
  rmSync(join(out, 'clusters.json'), { force: true });
};

try {
  for (const name of names) {
    const cluster = await startCluster({ name });
    clusters.push(cluster);
    controllers.push(await startWorkloadControllers(cluster.adminKubeconfig, { log: console.error }));
  }
} catch (err) {
  await stopAll();
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}

for (const c of clusters) {
  writeFileSync(join(out, `${c.name}.admin.kubeconfig`), c.kubeconfigYamlFor('admin'), { mode: 0o600 });
  writeFileSync(join(out, `${c.name}.control-plane.kubeconfig`), c.kubeconfigYamlFor('control-plane'), {
    mode: 0o600,
  });
}
writeFileSync(
  join(out, 'clusters.json'),
  JSON.stringify(
    clusters.map((c) => ({
      name: c.name,
      server: c.server,
      caData: c.caData,
      controlPlaneToken: c.controlPlaneToken,
      auditLogPath: c.auditLogPath,
    })),
    null,
    2,
  ) + '\n',
  { mode: 0o600 },
);
console.log(
  `[capstan kube] ${clusters.length} cluster(s) up; kubeconfigs and clusters.json in ${out}; Ctrl-C stops`,
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void stopAll().then(() => process.exit(0));
  });
}
setInterval(() => {}, 1 << 30);
