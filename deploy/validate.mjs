#!/usr/bin/env node
// Checks deploy/ without a container engine (the project's machines run none):
//  0. the Dockerfile pins kustomize and helm at the versions test/scripts/obtain-*.sh test with;
//  1. `kustomize build deploy/k8s` succeeds, in a scratch copy whose secrets/*.env come from
//     deploy/generate-secrets.sh (nothing is written into deploy/ itself);
//  2. the built objects are what the base promises (kinds, non-root read-only Pods, probes, only
//     the api open to everyone, repo's gRPC only from its callers, appset's only from the api);
//  3. deploy/docker-compose.yml parses, with every service health-checked on /readyz and sync
//     impersonating;
//  4. every environment variable handed to a service is one that service reads (its settings and
//     @capstan/service's common ones, from the built packages), and each service's full environment,
//     generated secrets included, passes the service's own configuration loader;
//  5. the HA overlay (deploy/k8s-ha) and the Helm chart (deploy/helm/capstan, rendered with the helm
//     test/scripts/obtain-helm.sh builds) hold what they promise;
//  6. with --apiserver: a real kube-apiserver (the test tooling's, test/dist/kube/up.js) accepts the
//     built objects and deploy/k3s/capstan-control-plane.yaml (kubectl apply --server-side), then the
//     HA overlay and the chart (server-side dry-run), with no warning, so no Pod Security
//     "restricted" violation either;
//  7. docs/settings.md is what deploy/settings-doc.mjs generates;
//  8. Capstan's identity on target clusters (deploy/k3s/capstan-control-plane.yaml) may only
//     impersonate ServiceAccounts: one ClusterRole with exactly that rule, bound to its ServiceAccount
//     alone, and no other role or binding, so the grant cannot grow unnoticed.
// Usage (after `npx turbo run build --filter=@capstan/api... --filter=@capstan/repo...
// --filter=@capstan/sync... --filter=@capstan/appset...`): node deploy/validate.mjs [--apiserver]
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { commonSettings, envNameOf, loadConfig } from '@capstan/service';
import { apiSettings } from '@capstan/api';
import { repoSettings } from '@capstan/repo';
import { syncSettings } from '@capstan/sync';
import { appsetSettings } from '@capstan/appset';

const deployDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.dirname(deployDir);
const settingsOf = { api: apiSettings, repo: repoSettings, sync: syncSettings, appset: appsetSettings };
/** Read by the image's entrypoint (SERVICE) or by node itself (NODE_OPTIONS), not by a service. */
const entrypointEnv = new Set(['SERVICE', 'NODE_OPTIONS']);
const envNames = (service) =>
  new Set(Object.entries({ ...commonSettings, ...settingsOf[service] }).map(([k, s]) => envNameOf(k, s)));

const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
};

function readEnvFile(file) {
  const out = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

function checkEnvironment(where, service, env) {
  const known = envNames(service);
  for (const name of Object.keys(env))
    check(known.has(name) || entrypointEnv.has(name), `${where}: ${service} does not read ${name}`);
  // The loaders take keyrings as strings and parse them at start; a quoting slip in an env file
  // (quotes kept or lost) would only show there, so parse them here as the services will.
  for (const [name, value] of Object.entries(env).filter(([n]) => n.endsWith('_ENCRYPTION_KEYS'))) {
    try {
      const ring = JSON.parse(value);
      check(Buffer.from(ring.keys[ring.active], 'base64').length === 32, `${where}: ${name}: active key`);
    } catch {
      failures.push(`${where}: ${name} is not keyring JSON`);
    }
  }
  try {
    loadConfig({ ...commonSettings, ...settingsOf[service] }, { argv: [], env });
  } catch (err) {
    const detail = (err.violations ?? err.fieldViolations ?? []).map((v) => `${v.field}: ${v.description}`);
    failures.push(`${where}: ${service} refuses its configuration: ${detail.join('; ') || err.message}`);
  }
}

/** Applies the objects to a throwaway kube-apiserver + etcd; any error or warning is a failure. */
async function applyToApiServer(scratch, files) {
  const out = path.join(scratch, 'kube');
  const up = spawn(
    process.execPath,
    [path.join(repoRoot, 'test/dist/kube/up.js'), '--clusters', 'deploy-check', '--out', out],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  try {
    for (let i = 0; i < 300 && !existsSync(path.join(out, 'clusters.json')); i++) {
      if (up.exitCode !== null) throw new Error(`kube-apiserver did not start (exit ${up.exitCode})`);
      await sleep(500);
    }
    const kubeconfig = path.join(out, 'deploy-check.admin.kubeconfig');
    for (const entry of files) {
      const { file, dryRun = false } = typeof entry === 'string' ? { file: entry } : entry;
      const result = spawnResult('kubectl', [
        '--kubeconfig',
        kubeconfig,
        'apply',
        '--server-side',
        ...(dryRun ? ['--dry-run=server'] : []),
        '-f',
        file,
      ]);
      const ok = result.status === 0 && !/warning/i.test(result.stderr);
      check(ok, `kube-apiserver: ${path.basename(file)}: ${result.stderr.trim()}`);
      if (ok)
        console.log(
          `kube-apiserver accepted ${path.basename(file)}${dryRun ? ' (server-side dry-run)' : ''}: ${result.stdout.trim().split('\n').length} objects, no warnings`,
        );
      if (file.endsWith('.crd.yaml'))
        spawnResult('kubectl', [
          '--kubeconfig',
          kubeconfig,
          'wait',
          '--for=condition=Established',
          '-f',
          file,
        ]);
    }
  } finally {
    up.kill('SIGTERM');
    await new Promise((resolve) => (up.exitCode !== null ? resolve() : up.once('exit', resolve)));
  }
}

function spawnResult(command, args) {
  try {
    const stdout = execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { status: 0, stdout, stderr: '' };
  } catch (err) {
    return { status: err.status ?? 1, stdout: err.stdout ?? '', stderr: err.stderr ?? err.message };
  }
}

/** The generated secrets of each service (the Helm chart takes them from Secrets it does not make). */
const placeholderSecrets = {};

const CNPG_CLUSTER_CRD_STAND_IN = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: clusters.postgresql.cnpg.io }
spec:
  group: postgresql.cnpg.io
  scope: Namespaced
  names: { kind: Cluster, plural: clusters, singular: cluster, listKind: ClusterList }
  versions:
    - name: v1
      served: true
      storage: true
      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
`;

const restrictedNamespace = (name) =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n  labels: { pod-security.kubernetes.io/enforce: restricted }\n`;

function withNamespace(text, namespace) {
  return parseAllDocuments(text)
    .filter((d) => d.contents)
    .map((d) => {
      const o = d.toJS();
      o.metadata.namespace ??= namespace;
      return stringify(o);
    })
    .join('---\n');
}

/** The HA variant: two replicas of every service, a three-node NATS, CloudNativePG with two instances. */
function checkHa(objects) {
  const find = (kind, name) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  for (const service of ['api', 'repo', 'sync', 'appset'])
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

/** The Helm chart: the same four Deployments as the base, as hardened, with PDBs and NetworkPolicies. */
function checkHelm(objects) {
  for (const service of ['api', 'repo', 'sync', 'appset']) {
    const d = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === `capstan-${service}`);
    const c = d?.spec.template.spec.containers[0];
    check(
      c?.securityContext.readOnlyRootFilesystem === true && d.spec.template.spec.securityContext.runAsNonRoot,
      `helm: capstan-${service} is not non-root with a read-only root filesystem`,
    );
    check(
      c?.readinessProbe?.httpGet?.path === '/readyz',
      `helm: capstan-${service} readiness is not /readyz`,
    );
    check(c?.resources?.requests?.cpu !== undefined, `helm: capstan-${service} has no resource requests`);
    const config = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name === `capstan-${service}-config`,
    );
    checkEnvironment(`helm capstan-${service}`, service, {
      ...config?.data,
      ...Object.fromEntries(c?.env.map((e) => [e.name, e.value]) ?? []),
      ...placeholderSecrets[service],
    });
  }
  const count = (kind) => objects.filter((o) => o.kind === kind).length;
  check(
    count('PodDisruptionBudget') === 4 && count('NetworkPolicy') === 6,
    'helm: PodDisruptionBudgets or NetworkPolicies missing',
  );
  console.log(`helm template deploy/helm/capstan: ${objects.length} objects`);
}

function checkControlPlaneRbac(objects) {
  const where = 'k3s/capstan-control-plane.yaml';
  const of = (kind) => objects.filter((o) => o?.kind === kind);
  const roles = of('ClusterRole');
  const onlyRule = [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] }];
  check(
    roles.length === 1 &&
      !roles[0].aggregationRule &&
      JSON.stringify(roles[0].rules) === JSON.stringify(onlyRule),
    `${where}: the control-plane ClusterRole must hold exactly ${JSON.stringify(onlyRule)}, has ${JSON.stringify(roles.map((r) => r.rules))}`,
  );
  const bindings = of('ClusterRoleBinding');
  const subjects = bindings.flatMap((b) => b.subjects ?? []);
  check(
    bindings.length === 1 &&
      bindings[0].roleRef?.kind === 'ClusterRole' &&
      bindings[0].roleRef?.name === roles[0]?.metadata?.name &&
      subjects.length === 1 &&
      subjects[0].kind === 'ServiceAccount' &&
      subjects[0].name === 'capstan-control-plane',
    `${where}: one ClusterRoleBinding of that role to ServiceAccount capstan-control-plane alone`,
  );
  const kinds = objects.map((o) => o?.kind).filter(Boolean);
  const allowed = new Set(['ServiceAccount', 'Secret', 'ClusterRole', 'ClusterRoleBinding']);
  check(
    kinds.every((k) => allowed.has(k)),
    `${where}: unexpected kinds ${kinds.filter((k) => !allowed.has(k)).join(', ')} (Roles or RoleBindings grant more)`,
  );
}

// --- 0: the image builds kustomize and helm at the versions the repo service is tested with ------
const dockerfile = readFileSync(path.join(deployDir, 'Dockerfile'), 'utf8');
for (const [tool, arg] of [
  ['kustomize', 'KUSTOMIZE_VERSION'],
  ['helm', 'HELM_VERSION'],
]) {
  const script = readFileSync(path.join(repoRoot, `test/scripts/obtain-${tool}.sh`), 'utf8');
  const tested = new RegExp(`\\$\\{${arg}:-([^}]+)\\}`).exec(script)?.[1];
  const imaged = new RegExp(`^ARG ${arg}=(\\S+)$`, 'm').exec(dockerfile)?.[1];
  check(
    tested !== undefined && tested === imaged,
    `Dockerfile: ${arg}=${imaged}, test/scripts/obtain-${tool}.sh uses ${tested}`,
  );
}

// --- 8: the control-plane identity's rights on target clusters: impersonate ServiceAccounts, no more --
checkControlPlaneRbac(
  parseAllDocuments(readFileSync(path.join(deployDir, 'k3s/capstan-control-plane.yaml'), 'utf8')).map((d) =>
    d.toJS(),
  ),
);

// --- 1 and 2: kustomize ---------------------------------------------------------------------------
const scratch = mkdtempSync(path.join(tmpdir(), 'capstan-deploy-check-'));
try {
  cpSync(deployDir, scratch, {
    recursive: true,
    filter: (src) => !/[/\\](\.env|\.k3s|secrets|pki)$/.test(src),
  });
  execFileSync('bash', [path.join(scratch, 'generate-secrets.sh')], {
    env: {
      ...process.env,
      CAPSTAN_DEPLOY_DATABASE_URL: 'postgres://capstan:placeholder@postgres.invalid:5432/capstan',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const kustomize = execFileSync(
    'bash',
    [path.join(repoRoot, 'test/scripts/obtain-kustomize.sh'), '--print-path'],
    {
      encoding: 'utf8',
    },
  ).trim();
  const built = execFileSync(kustomize, ['build', path.join(scratch, 'k8s')], { encoding: 'utf8' });
  const objects = parseAllDocuments(built).map((d) => d.toJS());
  // The HA variant (deploy/k8s-ha) and the Helm chart (deploy/helm/capstan), rendered with the
  // kustomize and helm the project builds.
  const builtHa = execFileSync(kustomize, ['build', path.join(scratch, 'k8s-ha')], { encoding: 'utf8' });
  const helm = execFileSync('bash', [path.join(repoRoot, 'test/scripts/obtain-helm.sh'), '--print-path'], {
    encoding: 'utf8',
  }).trim();
  const helmNamespace = 'capstan-helm';
  const rendered = execFileSync(
    helm,
    ['template', 'capstan', path.join(deployDir, 'helm/capstan'), '--namespace', helmNamespace],
    { encoding: 'utf8' },
  );
  for (const service of Object.keys(settingsOf))
    placeholderSecrets[service] = readEnvFile(path.join(scratch, `k8s/secrets/${service}.env`));
  checkHa(parseAllDocuments(builtHa).map((d) => d.toJS()));
  checkHelm(
    parseAllDocuments(rendered)
      .filter((d) => d.contents)
      .map((d) => d.toJS()),
  );
  if (process.argv.includes('--apiserver')) {
    const write = (name, text) => (writeFileSync(path.join(scratch, name), text), path.join(scratch, name));
    await applyToApiServer(scratch, [
      write('built.yaml', built),
      path.join(deployDir, 'k3s/capstan-control-plane.yaml'),
      // CloudNativePG's CRD is not available here: a schema-less stand-in lets the server check the
      // Cluster's apiVersion, kind and metadata, not its spec.
      write('cnpg-stand-in.crd.yaml', CNPG_CLUSTER_CRD_STAND_IN),
      { file: write('built-ha.yaml', builtHa), dryRun: true },
      write('helm-namespace.yaml', restrictedNamespace(helmNamespace)),
      // helm template leaves the namespace to the client, as helm install does.
      { file: write('helm.yaml', withNamespace(rendered, helmNamespace)), dryRun: true },
    ]);
  }
  const count = (kind) => objects.filter((o) => o.kind === kind).length;
  const expected = {
    Namespace: 1,
    ConfigMap: 7, // + capstan-nats-config, for the operator's nats-server; capstan-delegation-public
    Secret: 10, // + capstan-nats (its environment: the bus passwords); 4 × capstan-<service>-tls, capstan-delegation
    Deployment: 4,
    Service: 4,
    PodDisruptionBudget: 4,
    NetworkPolicy: 6,
  };
  for (const [kind, n] of Object.entries(expected))
    check(count(kind) === n, `kustomize: ${count(kind)} ${kind}, expected ${n}`);
  check(
    objects.every((o) => o.kind === 'Namespace' || o.metadata.namespace === 'capstan'),
    'kustomize: an object outside namespace capstan',
  );

  const byName = (kind, name) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  const usedConfig = new Set();
  for (const service of Object.keys(settingsOf)) {
    const d = byName('Deployment', `capstan-${service}`);
    if (!d) {
      failures.push(`kustomize: no Deployment capstan-${service}`);
      continue;
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
    // The Pod's whole environment as the service sees it: ConfigMaps and Secret in envFrom order
    // (each must exist under its generated name), then env.
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
    // Files: the projected TLS volume (certificate, key, CA, delegation key) at the paths the
    // environment names.
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
  }
  for (const o of objects.filter((o) => o.kind === 'ConfigMap' || o.kind === 'Secret')) {
    if (o.metadata.name.startsWith('capstan-nats')) continue; // mounted by the operator's NATS
    check(usedConfig.has(o.metadata.name), `kustomize: ${o.kind} ${o.metadata.name} used by no Deployment`);
  }

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
  console.log(
    `kustomize build deploy/k8s: ${objects.length} objects (${Object.entries(expected)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ')})`,
  );

  // --- 3 and 4: docker compose ---------------------------------------------------------------------
  const compose = parse(readFileSync(path.join(deployDir, 'docker-compose.yml'), 'utf8'), { merge: true });
  const dotenv = readEnvFile(path.join(scratch, '.env'));
  // compose's own interpolation, enough for this file: ${VAR}, ${VAR:-default}, ${VAR:?message}.
  const interpolate = (s) =>
    String(s).replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (_, name, op, arg) => {
      // Single quotes: literal; double quotes: \n is a newline (the PEM keys), as compose reads them.
      const raw = dotenv[name];
      const v = /^"(.*)"$/.test(raw ?? '')
        ? raw.slice(1, -1).replace(/\\n/g, '\n')
        : raw?.replace(/^'(.*)'$/, '$1');
      if (v !== undefined && v !== '') return v;
      if (op === '?') failures.push(`compose: ${name} unset (${arg})`);
      return op === '-' ? arg : '';
    });
  for (const name of ['nats', 'postgres', 'k3s', ...Object.keys(settingsOf)]) {
    const svc = compose.services[name];
    check(svc?.healthcheck?.test, `compose: ${name} has no healthcheck`);
  }
  // NATS runs with the generated bus users and permissions (libs/bus-auth): JetStream on, no
  // anonymous access, each service its own user.
  const natsConfig = readFileSync(path.join(deployDir, 'nats', 'nats-server.conf'), 'utf8');
  check(
    compose.services.nats.command.includes('--config=/etc/nats/nats-server.conf') &&
      compose.services.nats.volumes.some((v) => String(v).startsWith('./nats/nats-server.conf:')),
    'compose: NATS without deploy/nats/nats-server.conf',
  );
  check(/jetstream \{/.test(natsConfig), 'compose: NATS without JetStream');
  check(!/no_auth_user/.test(natsConfig) && /authorization \{/.test(natsConfig), 'NATS: anonymous access');
  for (const service of Object.keys(settingsOf))
    check(
      compose.services[service]?.environment?.NATS_USER === service,
      `compose: ${service} has no NATS_USER ${service}`,
    );
  for (const service of Object.keys(settingsOf)) {
    const svc = compose.services[service];
    check(
      svc.healthcheck.test.join(' ').includes('/readyz'),
      `compose: ${service} healthcheck is not /readyz`,
    );
    check(
      svc.read_only === true && svc.environment.SERVICE === service,
      `compose: ${service} image settings`,
    );
    const env = Object.fromEntries(Object.entries(svc.environment).map(([k, v]) => [k, interpolate(v)]));
    checkEnvironment(`compose ${service}`, service, env);
    for (const dep of Object.keys(svc.depends_on ?? {}))
      check(compose.services[dep], `compose: ${service} depends on unknown ${dep}`);
  }
  check(
    compose.services.sync.environment.CAPSTAN_APPLICATION_SYNC_IMPERSONATION_ENABLED === 'true',
    'compose: impersonation not enabled',
  );
  console.log(
    `docker-compose.yml: ${Object.keys(compose.services).length} services parsed, environments accepted by each service`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

// docs/settings.md is generated from the same settings definitions: it must be current.
const settingsDoc = spawnResult(process.execPath, [path.join(deployDir, 'settings-doc.mjs'), '--check']);
check(settingsDoc.status === 0, settingsDoc.stderr.trim() || 'docs/settings.md is stale');

if (failures.length > 0) {
  console.error(`deploy/ check failed:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
console.log('deploy/ check passed');
