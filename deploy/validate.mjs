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
//  5. with --apiserver: a real kube-apiserver (the test tooling's, test/dist/kube/up.js) accepts the
//     built objects and deploy/k3s/capstan-control-plane.yaml (kubectl apply --server-side), with no
//     warning, so no Pod Security "restricted" violation either.
// Usage (after `npx turbo run build --filter=@capstan/api... --filter=@capstan/repo...
// --filter=@capstan/sync... --filter=@capstan/appset...`): node deploy/validate.mjs [--apiserver]
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { commonSettings, envNameOf, loadConfig } from '@capstan/service';
import { apiSettings } from '@capstan/api';
import { repoSettings } from '@capstan/repo';
import { syncSettings } from '@capstan/sync';
import { appsetSettings } from '@capstan/appset';

const deployDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.dirname(deployDir);
const settingsOf = { api: apiSettings, repo: repoSettings, sync: syncSettings, appset: appsetSettings };
/** Read by the image's entrypoint, not by a service. */
const entrypointEnv = new Set(['SERVICE']);
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
    for (const file of files) {
      const result = spawnResult('kubectl', [
        '--kubeconfig',
        kubeconfig,
        'apply',
        '--server-side',
        '-f',
        file,
      ]);
      const ok = result.status === 0 && !/warning/i.test(result.stderr);
      check(ok, `kube-apiserver: ${path.basename(file)}: ${result.stderr.trim()}`);
      if (ok)
        console.log(
          `kube-apiserver accepted ${path.basename(file)}: ${result.stdout.trim().split('\n').length} objects, no warnings`,
        );
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

// --- 1 and 2: kustomize ---------------------------------------------------------------------------
const scratch = mkdtempSync(path.join(tmpdir(), 'capstan-deploy-check-'));
try {
  cpSync(deployDir, scratch, {
    recursive: true,
    filter: (src) => !/[/\\](\.env|\.k3s|secrets)$/.test(src),
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
  if (process.argv.includes('--apiserver')) {
    writeFileSync(path.join(scratch, 'built.yaml'), built);
    await applyToApiServer(scratch, [
      path.join(scratch, 'built.yaml'),
      path.join(deployDir, 'k3s/capstan-control-plane.yaml'),
    ]);
  }
  const count = (kind) => objects.filter((o) => o.kind === kind).length;
  const expected = {
    Namespace: 1,
    ConfigMap: 6, // + capstan-nats-config, for the operator's nats-server
    Secret: 5, // + capstan-nats (its environment: the bus passwords)
    Deployment: 4,
    Service: 4,
    PodDisruptionBudget: 4,
    NetworkPolicy: 5,
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
      const v = dotenv[name]?.replace(/^'(.*)'$/, '$1');
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

if (failures.length > 0) {
  console.error(`deploy/ check failed:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
console.log('deploy/ check passed');
