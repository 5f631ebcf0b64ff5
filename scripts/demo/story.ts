// The guestbook story, told with the real `capstan` CLI against the running stack: the admin logs
// in, the cluster operator prepares the tenant's namespace and ServiceAccount, the admin creates a
// project whose destinationServiceAccounts name that account, registers the cluster with the
// control-plane identity (which may only impersonate), adds the repository credential scoped to the
// project, creates the Application and syncs it. Then the cluster's own audit log and Capstan's
// audit trail show who did what. A second chapter (appset-story.ts) does the same with an
// ApplicationSet that generates one Application per add-on folder; a third (self-service-story.ts)
// delivers a developer's AppProject from git, bounded by its parent. Live state (live-state-story.ts)
// comes first of those: drift, diff, self-heal, health and deletion; then git webhooks
// (webhook-story.ts) and Helm (charts-story.ts: a chart from an OCI registry with values from git).
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  loadAllYaml,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { effectiveUser, readAuditLog } from '@capstan/test/kube';
import { runAppsetChapter } from './appset-story.js';
import { runSelfServiceChapter } from './self-service-story.js';
import { runLiveStateChapter } from './live-state-story.js';
import { runWebhookChapter } from './webhook-story.js';
import { bannerApp, runChartsChapter } from './charts-story.js';
import { runProjectTokenStep } from './project-token-step.js';
import { runSsoChapter } from './sso-story.js';
import { runSettingsStep } from './settings-step.js';
import { runMetricsStep } from './metrics-step.js';
import { capstan } from './capstan-cli.js';
import type { ClusterInfo, GitInfo } from './launch.js';
import { detail, done, heading, step } from './progress.js';
import type { StackSecrets } from './secrets.js';
import { installation, paths, story } from './stack.js';

export interface StoryInput {
  cluster: ClusterInfo;
  git: GitInfo;
  secrets: StackSecrets;
  /** Dex's issuer URL (the single sign-on chapter's provider). */
  dexIssuer: string;
}

/** The cluster operator's part, with the cluster's admin kubeconfig: server-side apply of tenant.yaml. */
async function prepareTenant(adminKubeconfig: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfig);
  const client = KubernetesObjectApi.makeApiClient(kc);
  const file = path.join(paths.demo, 'cluster/tenant.yaml');
  for (const obj of loadAllYaml(readFileSync(file, 'utf8')) as KubernetesObject[]) {
    await client.patch(obj, undefined, undefined, 'cluster-operator', true, PatchStrategy.ServerSideApply);
    const ns = obj.metadata?.namespace ? `${obj.metadata.namespace}/` : '';
    detail(`${obj.kind} ${ns}${obj.metadata?.name} applied as the cluster admin`);
  }
}

/** Who wrote to the tenant's namespace, according to the API server's own audit log. */
export async function clusterWrites(cluster: ClusterInfo, since: number): Promise<void> {
  const writes = new Set(['create', 'update', 'patch', 'delete']);
  // The audit log is written asynchronously to the response: give it a moment to catch up.
  await new Promise((r) => setTimeout(r, 1_000));
  const events = (await readAuditLog(cluster.auditLogPath, { since })).filter(
    (e) => e.stage === 'ResponseComplete' && writes.has(e.verb) && e.objectRef?.namespace === story.namespace,
  );
  if (events.length === 0) {
    detail('no writes to the namespace in the API server audit log');
    return;
  }
  for (const e of events) {
    const ref = e.objectRef!;
    const as = e.impersonatedUser
      ? `${effectiveUser(e)} (impersonated by ${e.user.username})`
      : e.user.username;
    detail(
      `${e.verb.padEnd(6)} ${`${ref.resource}/${ref.name ?? ''}`.padEnd(32)} ${String(e.responseStatus?.code ?? '').padEnd(4)} as ${as}`,
    );
  }
}

export async function runStory({ cluster, git, secrets, dexIssuer }: StoryInput): Promise<void> {
  const repo = git.repositories.find((r) => r.name === story.repository)!;
  const server = cluster.server;
  const auditMark = statSync(cluster.auditLogPath).size;

  heading('The guestbook story, with the capstan CLI');

  step('log in as the bootstrap admin (password from .capstan/secrets.json, on stdin)');
  await capstan(
    [
      'login',
      installation.apiAddress,
      '--username',
      'admin',
      '--password-stdin',
      '--name',
      installation.context,
    ],
    { stdin: secrets.adminPassword + '\n' },
  );
  done();

  step(
    `cluster operator: namespace ${story.namespace}, ServiceAccount ${story.serviceAccount}, Role and RoleBinding`,
  );
  await prepareTenant(cluster.adminKubeconfig);
  done();

  await runSettingsStep();

  step(
    `create project ${story.project}: syncs to ${story.namespace} run as ${story.namespace}:${story.serviceAccount}`,
  );
  await capstan([
    'proj',
    'create',
    story.project,
    '--description',
    'guestbook tenant',
    '--src',
    repo.url,
    '--src',
    story.chartRegistry,
    '--dest',
    `${server},${story.namespace}`,
    '--dest-service-account',
    `${server},${story.namespace},${story.serviceAccount}`,
    '--upsert',
  ]);
  done();

  step('register the cluster with the control-plane identity (it may only impersonate ServiceAccounts)');
  await capstan([
    'cluster',
    'add',
    '--kubeconfig',
    cluster.controlPlaneKubeconfig,
    '--name',
    story.cluster,
    '--upsert',
  ]);
  done();

  step(`add the repository credential, scoped to project ${story.project}`);
  await capstan(
    [
      'repo',
      'add',
      repo.url,
      '--project',
      story.project,
      '--username',
      story.gitUsername,
      '--password-stdin',
      '--upsert',
    ],
    { stdin: secrets.gitPassword + '\n' },
  );
  done();

  step(`create Application ${story.application}`);
  await capstan([
    'app',
    'create',
    story.application,
    '--project',
    story.project,
    '--repo',
    repo.url,
    '--path',
    story.repositoryPath,
    '--revision',
    'main',
    '--dest-server',
    server,
    '--dest-namespace',
    story.namespace,
    '--upsert',
  ]);
  done();

  step(`sync ${story.application} (live progress)`);
  await capstan(['app', 'sync', story.application, '--timeout', '180']);
  done();

  heading('Result');
  await capstan(['app', 'get', story.application]);
  await runMetricsStep(story.application);

  step(
    `and a refusal: an Application of ${story.project} aimed at kube-system, outside the project's destinations`,
  );
  // The api checks the destination against the project chain when the Application is written, as
  // Argo CD does: the refusal names the field, and nothing is stored or synced.
  const refused = await capstan(
    [
      'app',
      'create',
      story.refusedApplication,
      '--project',
      story.project,
      '--repo',
      repo.url,
      '--path',
      story.repositoryPath,
      '--dest-server',
      server,
      '--dest-namespace',
      'kube-system',
      '--upsert',
    ],
    { expectFailure: true },
  );
  if (refused.code === 0) throw new Error(`the Application ${story.refusedApplication} was not refused`);
  done('(refused when written: nothing stored, nothing reached the cluster)');

  step(`writes to namespace ${story.namespace}, from the Kubernetes API server's own audit log`);
  await clusterWrites(cluster, auditMark);
  done();

  heading('Audit trail (PostgreSQL, append-only and hash-chained)');
  await capstan(['audit', 'query', 'sync_decisions', '--project', story.project, '-o', 'wide']);
  await capstan(['audit', 'query', 'resource_results', '--app', story.application]);
  await capstan(['audit', 'query', 'credential_decisions', '--project', story.project, '--limit', '10']);
  await capstan(['audit', 'query', 'access_decisions', '--limit', '12']);
  await capstan(['audit', 'verify']);

  // What the services' bus consumers gave up on (docs/events.md, Dead letters): an operator replays
  // one with `capstan admin dlq replay <service>:<n>` once its cause is fixed.
  heading('Dead letters (every consumer of every service, admins only)');
  await capstan(['admin', 'dlq', 'list', '--limit', '5']);

  await runLiveStateChapter(cluster, repo.url);
  await runWebhookChapter(repo.url, secrets.webhookSecret);
  await runChartsChapter(cluster, repo.url);
  await runProjectTokenStep(bannerApp.name);
  await runSsoChapter(dexIssuer, secrets);
  await runAppsetChapter(cluster, repo.url);
  await runSelfServiceChapter(cluster, repo.url, secrets);
}
