// The kustomize base (deploy/k8s), built: the objects it promises, non-root read-only Pods with
// probes, requests and their own secrets, environments each service accepts, and NetworkPolicies
// that leave only the api open to everyone.
import { checkEnvironment, services } from './environment.mjs';
import { check, failures } from './report.mjs';

const expected = {
  Namespace: 1,
  ConfigMap: 7, // + capstan-nats-config, for the operator's nats-server; capstan-delegation-public
  Secret: 10, // + capstan-nats (its environment: the bus passwords); 4 × capstan-<service>-tls, capstan-delegation
  Deployment: 4,
  Service: 4,
  PodDisruptionBudget: 4,
  NetworkPolicy: 6,
};

/**
 * The gRPC ports speak TLS (mutual TLS inside, the internal CA's certificate to users): a Service
 * must not announce cleartext HTTP/2 (kubernetes.io/h2c), which would make a Gateway or mesh talk
 * cleartext to them. `https` (HTTP over TLS; gRPC negotiates HTTP/2 by ALPN) is what they speak.
 */
export function checkGrpcAppProtocol(where, service) {
  const grpc = service?.spec.ports.find((p) => p.name === 'grpc');
  check(
    grpc === undefined || grpc.appProtocol === 'https',
    `${where}: gRPC port appProtocol ${grpc?.appProtocol}, expected https (it speaks TLS)`,
  );
}

export function checkBase(objects) {
  const count = (kind) => objects.filter((o) => o.kind === kind).length;
  for (const [kind, n] of Object.entries(expected))
    check(count(kind) === n, `kustomize: ${count(kind)} ${kind}, expected ${n}`);
  check(
    objects.every((o) => o.kind === 'Namespace' || o.metadata.namespace === 'capstan'),
    'kustomize: an object outside namespace capstan',
  );
  const byName = (kind, name) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  const usedConfig = new Set();
  for (const service of services) checkBaseService(service, byName, usedConfig);
  for (const o of objects.filter((o) => o.kind === 'ConfigMap' || o.kind === 'Secret')) {
    if (o.metadata.name.startsWith('capstan-nats')) continue; // mounted by the operator's NATS
    check(usedConfig.has(o.metadata.name), `kustomize: ${o.kind} ${o.metadata.name} used by no Deployment`);
  }
  checkNetworkPolicies(objects, byName);
  console.log(
    `kustomize build deploy/k8s: ${objects.length} objects (${Object.entries(expected)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ')})`,
  );
}

function checkBaseService(service, byName, usedConfig) {
  const d = byName('Deployment', `capstan-${service}`);
  if (!d) {
    failures.push(`kustomize: no Deployment capstan-${service}`);
    return;
  }
  const pod = d.spec.template.spec;
  const c = pod.containers[0];
  const where = `Deployment capstan-${service}`;
  check(
    pod.securityContext.runAsNonRoot === true && pod.securityContext.runAsUser !== 0,
    `${where}: not non-root`,
  );
  check(c.securityContext.readOnlyRootFilesystem === true, `${where}: root filesystem writable`);
  check(c.securityContext.allowPrivilegeEscalation === false, `${where}: privilege escalation allowed`);
  check(
    c.readinessProbe?.httpGet?.path === '/readyz' && c.livenessProbe?.httpGet?.path === '/healthz',
    `${where}: probes`,
  );
  check(c.resources?.requests?.cpu && c.resources?.requests?.memory, `${where}: no resource requests`);
  check(
    pod.volumes.some((v) => v.name === 'tmp' && v.emptyDir) &&
      c.volumeMounts.some((m) => m.mountPath === '/tmp'),
    `${where}: /tmp is not an emptyDir`,
  );
  check(c.image === 'capstan:dev', `${where}: image ${c.image}`);
  const env = podEnvironment(where, c, byName, usedConfig);
  checkTlsMounts(where, service, pod, env, byName, usedConfig);
  check(
    c.envFrom.some((e) => e.secretRef?.name.startsWith(`capstan-${service}-`)),
    `${where}: does not receive its own Secret`,
  );
  if (service === 'repo')
    check(
      c.volumeMounts.some((m) => m.mountPath === env.CAPSTAN_CACHE_DIR),
      `${where}: no volume at the cache dir`,
    );
  if (service === 'sync')
    check(env.CAPSTAN_APPLICATION_SYNC_IMPERSONATION_ENABLED === 'true', `${where}: impersonation off`);
  checkEnvironment(where, service, env);
  check(
    byName('PodDisruptionBudget', `capstan-${service}`) !== undefined,
    `${where}: no PodDisruptionBudget`,
  );
  const svc = byName('Service', `capstan-${service}`);
  const containerPorts = new Set(c.ports.map((p) => p.name));
  check(
    svc?.spec.ports.every((p) => containerPorts.has(p.targetPort)),
    `Service capstan-${service}: a targetPort names no container port`,
  );
  checkGrpcAppProtocol(`Service capstan-${service}`, svc);
}

/** The Pod's whole environment as the service sees it: ConfigMaps and Secret in envFrom order
 * (each must exist under its generated name), then env. */
function podEnvironment(where, c, byName, usedConfig) {
  const env = {};
  for (const from of c.envFrom) {
    const [kind, name] = from.secretRef
      ? ['Secret', from.secretRef.name]
      : ['ConfigMap', from.configMapRef.name];
    const source = byName(kind, name);
    check(source !== undefined, `${where}: ${kind} ${name} not generated`);
    for (const [k, v] of Object.entries(source?.data ?? {}))
      env[k] = kind === 'Secret' ? Buffer.from(v, 'base64').toString() : v;
    usedConfig.add(name);
  }
  for (const e of c.env) env[e.name] = e.value;
  return env;
}

/** Files: the projected TLS volume (certificate, key, CA, delegation key) at the paths the
 * environment names. */
function checkTlsMounts(where, service, pod, env, byName, usedConfig) {
  const tls = pod.volumes.find((v) => v.name === 'tls')?.projected?.sources ?? [];
  for (const source of tls) {
    const ref = source.secret ? ['Secret', source.secret.name] : ['ConfigMap', source.configMap.name];
    check(byName(...ref) !== undefined, `${where}: ${ref.join(' ')} not generated`);
    usedConfig.add(ref[1]);
  }
  const mounted = new Set(
    tls.flatMap((s) => (s.secret ?? s.configMap).items.map((i) => `/etc/capstan/tls/${i.path}`)),
  );
  for (const name of Object.keys(env).filter((n) => n.startsWith('CAPSTAN_') && n.endsWith('_FILE')))
    check(mounted.has(env[name]), `${where}: ${name}=${env[name]} is not a mounted file`);
  check(
    tls.some((s) => s.secret?.name.startsWith(`capstan-${service}-tls-`)),
    `${where}: does not mount its own TLS Secret`,
  );
}

function checkNetworkPolicies(objects, byName) {
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
  const openToAll = policies.filter((p) => (p.spec.ingress ?? []).some((rule) => !rule.from));
  check(
    openToAll.length === 1 &&
      openToAll[0].spec.podSelector.matchLabels['app.kubernetes.io/name'] === 'capstan-api',
    'NetworkPolicy: something besides the api accepts traffic from anywhere',
  );
  check(
    policies.some((p) => Object.keys(p.spec.podSelector).length === 0 && (p.spec.ingress ?? []).length === 0),
    'NetworkPolicy: no default deny',
  );
  const repoPolicy = byName('NetworkPolicy', 'capstan-repo-ingress');
  check(
    JSON.stringify(repoPolicy?.spec.ingress[0].from[0].podSelector.matchExpressions[0].values) ===
      '["capstan-api","capstan-sync","capstan-appset"]',
    'NetworkPolicy: repo gRPC callers',
  );
  const appsetPolicy = byName('NetworkPolicy', 'capstan-appset-ingress');
  check(
    JSON.stringify(appsetPolicy?.spec.ingress) ===
      '[{"from":[{"podSelector":{"matchLabels":{"app.kubernetes.io/name":"capstan-api"}}}],"ports":[{"port":"grpc","protocol":"TCP"}]}]',
    'NetworkPolicy: appset gRPC only from the api',
  );
}
