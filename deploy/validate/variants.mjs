// The HA overlay (deploy/k8s-ha) and the Helm chart (deploy/helm/capstan): what each promises beyond
// the base.
import { checkEnvironment, services } from './environment.mjs';
import { checkGrpcAppProtocol } from './kustomize-base.mjs';
import { check } from './report.mjs';

/** The HA variant: two replicas of every service, a three-node NATS, CloudNativePG with two instances. */
export function checkHa(objects) {
  const find = (kind, name) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  for (const service of services)
    check(
      find('Deployment', `capstan-${service}`)?.spec.replicas === 2,
      `k8s-ha: capstan-${service} replicas`,
    );
  check(find('StatefulSet', 'capstan-nats')?.spec.replicas === 3, 'k8s-ha: NATS is not a three-node cluster');
  check(find('PodDisruptionBudget', 'capstan-nats') !== undefined, 'k8s-ha: NATS has no PodDisruptionBudget');
  const pg = find('Cluster', 'capstan-pg');
  check(pg?.spec.instances >= 2, 'k8s-ha: PostgreSQL (CloudNativePG) has fewer than two instances');
  check(
    find('Secret', pg?.spec.bootstrap.initdb.secret.name) !== undefined,
    "k8s-ha: the CloudNativePG owner Secret's name does not match",
  );
  const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('capstan-config-'));
  check(
    config?.data.NATS_URL === 'nats://capstan-nats:4222',
    'k8s-ha: the services do not use the NATS cluster',
  );
  // One stream replica per NATS node: a stream survives the loss of any node.
  check(
    Number(config?.data.CAPSTAN_BUS_STREAM_REPLICAS) === find('StatefulSet', 'capstan-nats')?.spec.replicas,
    'k8s-ha: CAPSTAN_BUS_STREAM_REPLICAS is not the NATS cluster size',
  );
  console.log(`kustomize build deploy/k8s-ha: ${objects.length} objects`);
}

/**
 * The Helm chart: the same four Deployments as the base (replicas included), as hardened, with PDBs
 * and NetworkPolicies. `secrets` are each service's generated secrets (the chart takes them from
 * Secrets it does not make); `base` the kustomize base's objects.
 */
export function checkHelm(objects, { secrets, base }) {
  for (const service of services) {
    const name = `capstan-${service}`;
    const d = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name);
    const c = d?.spec.template.spec.containers[0];
    check(
      c?.securityContext.readOnlyRootFilesystem === true && d.spec.template.spec.securityContext.runAsNonRoot,
      `helm: ${name} is not non-root with a read-only root filesystem`,
    );
    check(c?.readinessProbe?.httpGet?.path === '/readyz', `helm: ${name} readiness is not /readyz`);
    check(c?.resources?.requests?.cpu !== undefined, `helm: ${name} has no resource requests`);
    const baseReplicas = base.find((o) => o.kind === 'Deployment' && o.metadata.name === name)?.spec.replicas;
    check(
      d?.spec.replicas === baseReplicas,
      `helm: ${name} runs ${d?.spec.replicas} replicas, the kustomize base ${baseReplicas}`,
    );
    checkGrpcAppProtocol(
      `helm Service ${name}`,
      objects.find((o) => o.kind === 'Service' && o.metadata.name === name),
    );
    const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === `${name}-config`);
    checkEnvironment(`helm ${name}`, service, {
      ...config?.data,
      ...Object.fromEntries(c?.env.map((e) => [e.name, e.value]) ?? []),
      ...secrets[service],
    });
  }
  const count = (kind) => objects.filter((o) => o.kind === kind).length;
  check(
    count('PodDisruptionBudget') === 4 && count('NetworkPolicy') === 6,
    'helm: PodDisruptionBudgets or NetworkPolicies missing',
  );
  console.log(`helm template deploy/helm/capstan: ${objects.length} objects`);
}
