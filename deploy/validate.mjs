#!/usr/bin/env node
// Checks deploy/ without a container engine (the project's machines run none); each part is a module
// of deploy/validate/:
//  0. tools.mjs: the Dockerfile pins kustomize and helm at the versions test/scripts/obtain-*.sh test with;
//  1. `kustomize build deploy/k8s` succeeds, in a scratch copy whose secrets/*.env come from
//     deploy/generate-secrets.sh (nothing is written into deploy/ itself);
//  2. kustomize-base.mjs: the built objects are what the base promises (kinds, non-root read-only
//     Pods, probes, gRPC Services announcing TLS, only the api open to everyone, repo's gRPC only
//     from its callers, appset's only from the api);
//  3. compose.mjs: deploy/docker-compose.yml parses, with every service health-checked on /readyz,
//     sync impersonating, and every variable it requires listed in deploy/.env.example;
//  4. environment.mjs: every environment variable handed to a service is one that service reads (its
//     settings and @capstan/service's common ones, from the built packages), and each service's full
//     environment, generated secrets included, passes the service's own configuration loader;
//  5. variants.mjs: the HA overlay (deploy/k8s-ha) and the Helm chart (deploy/helm/capstan, rendered
//     with the helm test/scripts/obtain-helm.sh builds) hold what they promise, the chart with the
//     base's replicas;
//  6. apiserver.mjs, with --apiserver: a real kube-apiserver (the test tooling's, @capstan/test/kube)
//     accepts the built objects and deploy/k3s/capstan-control-plane.yaml (server-side apply with
//     @kubernetes/client-node), then the HA overlay and the chart (server-side apply, dryRun=All),
//     with no warning, so no Pod Security "restricted" violation either; no kubectl needed;
//  7. docs/settings.md is what deploy/settings-doc.mjs generates;
//  8. rbac.mjs: Capstan's identity on target clusters (deploy/k3s/capstan-control-plane.yaml) may
//     only impersonate ServiceAccounts.
// Usage (after `npx turbo run build --filter=@capstan/api... --filter=@capstan/repo...
// --filter=@capstan/sync... --filter=@capstan/appset... --filter=@capstan/test`):
// node deploy/validate.mjs [--apiserver]
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { applyToApiServer } from './validate/apiserver.mjs';
import { checkCompose } from './validate/compose.mjs';
import { services } from './validate/environment.mjs';
import { checkBase } from './validate/kustomize-base.mjs';
import { checkControlPlaneRbac } from './validate/rbac.mjs';
import { failures, check, readEnvFile, spawnResult } from './validate/report.mjs';
import { checkToolPins, obtainTool } from './validate/tools.mjs';
import { checkHa, checkHelm } from './validate/variants.mjs';

const deployDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.dirname(deployDir);

// CloudNativePG's CRD is not available here: a schema-less stand-in lets the server check the
// Cluster's apiVersion, kind and metadata, not its spec.
const cnpgClusterCrdStandIn = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'clusters.postgresql.cnpg.io' },
  spec: {
    group: 'postgresql.cnpg.io',
    scope: 'Namespaced',
    names: { kind: 'Cluster', plural: 'clusters', singular: 'cluster', listKind: 'ClusterList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

const restrictedNamespace = (name) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
});

const objectsOf = (text) =>
  parseAllDocuments(text)
    .filter((d) => d.contents)
    .map((d) => d.toJS());

checkToolPins(repoRoot, deployDir);
const controlPlane = objectsOf(readFileSync(path.join(deployDir, 'k3s/capstan-control-plane.yaml'), 'utf8'));
checkControlPlaneRbac(controlPlane);

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
  // The base, the HA variant and the Helm chart, rendered with the kustomize and helm the project builds.
  const kustomize = obtainTool(repoRoot, 'kustomize');
  const helm = obtainTool(repoRoot, 'helm');
  const build = (dir) =>
    objectsOf(execFileSync(kustomize, ['build', path.join(scratch, dir)], { encoding: 'utf8' }));
  const base = build('k8s');
  const ha = build('k8s-ha');
  const helmNamespace = 'capstan-helm';
  const rendered = objectsOf(
    execFileSync(
      helm,
      ['template', 'capstan', path.join(deployDir, 'helm/capstan'), '--namespace', helmNamespace],
      {
        encoding: 'utf8',
      },
    ),
  );
  // helm template leaves the namespace to the client, as helm install does.
  for (const o of rendered) o.metadata.namespace ??= helmNamespace;
  const secrets = Object.fromEntries(
    services.map((s) => [s, readEnvFile(path.join(scratch, `k8s/secrets/${s}.env`))]),
  );
  checkBase(base);
  checkHa(ha);
  checkHelm(rendered, { secrets, base });
  checkCompose(deployDir, readEnvFile(path.join(scratch, '.env')));
  if (process.argv.includes('--apiserver'))
    await applyToApiServer([
      { name: 'deploy/k8s', objects: base },
      { name: 'deploy/k3s/capstan-control-plane.yaml', objects: controlPlane },
      { name: 'the CloudNativePG Cluster CRD stand-in', objects: [cnpgClusterCrdStandIn] },
      { name: 'deploy/k8s-ha', objects: ha, dryRun: true },
      { name: `namespace ${helmNamespace}`, objects: [restrictedNamespace(helmNamespace)] },
      { name: 'deploy/helm/capstan', objects: rendered, dryRun: true },
    ]);
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
