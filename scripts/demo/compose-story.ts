// The guestbook story against the docker compose stack (npm run compose:test, deploy/ci/compose-test.sh),
// through its published ports only, with the real `capstan` CLI: log in, the cluster operator's
// part (Capstan's impersonate-only identity and the tenant's namespace, ServiceAccount and Role),
// a project whose destinationServiceAccounts name that account, the cluster registered with a
// token of Capstan's identity, a repository credential, an Application, a sync. Then the proofs:
// the target API server's own audit log shows every write to the tenant's namespace made by the
// tenant's ServiceAccount (impersonated by Capstan's identity, which wrote nothing as itself), and
// `capstan audit verify` checks Capstan's hash-chained audit trail.
//
// Input (environment, from compose-test.sh): CAPSTAN_CI_API (host:port of the api's gRPC),
// CAPSTAN_DEMO_SERVER_CRT (the internal CA), CAPSTAN_CI_ADMIN_PASSWORD, CAPSTAN_CI_KUBE_SERVER (the
// cluster's published address), CAPSTAN_CI_KUBE_CA_FILE, CAPSTAN_CI_KUBE_ADMIN_TOKEN,
// CAPSTAN_CI_GIT_USERNAME, CAPSTAN_CI_GIT_PASSWORD, CAPSTAN_CI_AUDIT_CMD (JSON argv printing the
// cluster's audit log), CAPSTAN_CI_WORK (a scratch directory).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  loadAllYaml,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  effectiveUser,
  requestServiceAccountToken,
  startWorkloadControllers,
  type AuditEvent,
} from '@capstan/test/kube';
import { capstan } from './capstan-cli.js';
import { detail, done, heading, step } from './progress.js';
import { paths, repoRoot, story } from './stack.js';

const need = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run through deploy/ci/compose-test.sh)`);
  return v;
};
const work = need('CAPSTAN_CI_WORK');
/** How the services inside the compose network reach the cluster and the git server. */
const clusterServer = 'https://k3s:6443';
const repoUrl = `http://git:8080/${story.repository}`;
const controlPlaneUser = 'system:serviceaccount:kube-system:capstan-control-plane';
const tenantUser = `system:serviceaccount:${story.namespace}:${story.serviceAccount}`;

function adminKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'ci', server: need('CAPSTAN_CI_KUBE_SERVER'), caFile: need('CAPSTAN_CI_KUBE_CA_FILE') },
    ],
    users: [{ name: 'admin', token: need('CAPSTAN_CI_KUBE_ADMIN_TOKEN') }],
    contexts: [{ name: 'ci', cluster: 'ci', user: 'admin' }],
    currentContext: 'ci',
  });
  return kc;
}

/** Server-side apply, as the cluster admin (what k3s does with its manifests directory). */
async function applyAsAdmin(kc: KubeConfig, file: string): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  for (const obj of loadAllYaml(readFileSync(file, 'utf8')) as KubernetesObject[]) {
    await client.patch(obj, undefined, undefined, 'cluster-operator', true, PatchStrategy.ServerSideApply);
    const ns = obj.metadata?.namespace ? `${obj.metadata.namespace}/` : '';
    detail(`${obj.kind} ${ns}${obj.metadata?.name}`);
  }
}

/** The cluster's audit log, read inside its container (the server writes it there). */
function auditEvents(): AuditEvent[] {
  const [cmd, ...args] = JSON.parse(need('CAPSTAN_CI_AUDIT_CMD')) as string[];
  const text = execFileSync(cmd!, args, { encoding: 'utf8', maxBuffer: 256 << 20 });
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as AuditEvent);
}

/** Every write to the tenant's namespace ran as the tenant's ServiceAccount, through Capstan's identity. */
async function proveImpersonation(): Promise<void> {
  const writes = new Set(['create', 'update', 'patch', 'delete']);
  let events: AuditEvent[] = [];
  for (let i = 0; i < 20; i++) {
    events = auditEvents().filter(
      (e) =>
        e.stage === 'ResponseComplete' &&
        writes.has(e.verb) &&
        e.objectRef?.namespace === story.namespace &&
        e.user.username !== 'capstan-admin',
    );
    if (events.some((e) => e.objectRef?.resource === 'deployments')) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  for (const e of events)
    detail(
      `${e.verb.padEnd(6)} ${`${e.objectRef?.resource}/${e.objectRef?.name ?? ''}`.padEnd(28)} ${e.responseStatus?.code} as ${effectiveUser(e)} (authenticated: ${e.user.username})`,
    );
  const resources = new Set(
    events.filter((e) => (e.responseStatus?.code ?? 500) < 300).map((e) => e.objectRef?.resource),
  );
  for (const r of ['configmaps', 'services', 'deployments'])
    if (!resources.has(r))
      throw new Error(`no successful write of ${r} in ${story.namespace} in the audit log`);
  const wrong = events.filter((e) => e.user.username !== controlPlaneUser || effectiveUser(e) !== tenantUser);
  if (wrong.length > 0)
    throw new Error(
      `${wrong.length} write(s) in ${story.namespace} not made as ${tenantUser} via ${controlPlaneUser}`,
    );
}

async function main(): Promise<void> {
  const kc = adminKubeConfig();
  heading('The guestbook story against docker compose (published ports only)');

  step('log in as the bootstrap admin (password on stdin)');
  await capstan(
    ['login', need('CAPSTAN_CI_API'), '--username', 'admin', '--password-stdin', '--name', 'compose-ci'],
    {
      stdin: need('CAPSTAN_CI_ADMIN_PASSWORD') + '\n',
    },
  );
  done();

  step(
    "cluster operator: Capstan's identity (impersonate only) and the tenant's namespace, ServiceAccount, Role",
  );
  await applyAsAdmin(kc, path.join(repoRoot, 'deploy/k3s/capstan-control-plane.yaml'));
  await applyAsAdmin(kc, path.join(paths.demo, 'cluster/tenant.yaml'));
  // No controller manager runs in the stand-in: Deployments become available through this.
  const controllers = await startWorkloadControllers(kc, { log: () => {} });
  const tokenFile = path.join(work, 'control-plane.token');
  writeFileSync(tokenFile, await requestServiceAccountToken(kc, 'kube-system', 'capstan-control-plane'), {
    mode: 0o600,
  });
  done();

  try {
    step(`create project ${story.project}: syncs to ${story.namespace} run as ${tenantUser}`);
    await capstan([
      'proj',
      'create',
      story.project,
      '--src',
      repoUrl,
      '--dest',
      `${clusterServer},${story.namespace}`,
      '--dest-service-account',
      `${clusterServer},${story.namespace},${story.serviceAccount}`,
      '--upsert',
    ]);
    done();

    step(
      "register the cluster with Capstan's identity (a token of ServiceAccount kube-system/capstan-control-plane)",
    );
    await capstan([
      'cluster',
      'add',
      clusterServer,
      '--name',
      'k3s',
      '--bearer-token-file',
      tokenFile,
      '--ca-file',
      need('CAPSTAN_CI_KUBE_CA_FILE'),
      '--upsert',
    ]);
    done();

    step(`add the repository credential, scoped to project ${story.project}`);
    await capstan(
      [
        'repo',
        'add',
        repoUrl,
        '--project',
        story.project,
        '--username',
        need('CAPSTAN_CI_GIT_USERNAME'),
        '--password-stdin',
        '--upsert',
      ],
      { stdin: need('CAPSTAN_CI_GIT_PASSWORD') + '\n' },
    );
    done();

    step(`create Application ${story.application} and sync it`);
    await capstan([
      'app',
      'create',
      story.application,
      '--project',
      story.project,
      '--repo',
      repoUrl,
      '--path',
      story.repositoryPath,
      '--revision',
      'main',
      '--dest-server',
      clusterServer,
      '--dest-namespace',
      story.namespace,
      '--upsert',
    ]);
    await capstan(['app', 'sync', story.application, '--timeout', '180']);
    await capstan(['app', 'get', story.application]);
    done();

    step(`writes to namespace ${story.namespace}, from the target API server's audit log`);
    await proveImpersonation();
    done();

    step("Capstan's audit trail: hash chain verified");
    await capstan(['audit', 'verify']);
    done();
  } finally {
    await controllers.stop();
  }
}

main().catch((err: unknown) => {
  console.error(`\ncompose story: failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
