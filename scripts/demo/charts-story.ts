// The story's Helm chapter (issue 16): the platform team packages the banner chart (charts/banner)
// with the real helm as 0.1.0 and 0.2.0 and pushes both to the stack's OCI registry; the admin
// registers the registry for team-a (OCI over plain HTTP, scoped to the project), then creates a
// multi-source Application from banner-app.yaml: the chart from the registry, its production values
// from the guestbook's git repository (`ref: values`, `$values/banner-values/prod.yaml`). It syncs
// with one revision per source; then `--revisions 0.1.0 --source-positions 1` (as argocd) syncs
// the chart's source at its older version while the values source stays at its target, and the
// history records both sources' revisions. The Application subscribes to Argo CD Notifications'
// on-sync-succeeded (notifications-step.ts): each sync's delivery reaches a local receiver.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { capstan } from './capstan-cli.js';
import { obtainedTool } from '@capstan/test/infra';
import type { ClusterInfo } from './launch.js';
import { configureNotifications, showDelivery, type Receiver } from './notifications-step.js';
import { detail, done, heading, step } from './progress.js';
import { paths, story } from './stack.js';

const run = promisify(execFile);

export const bannerApp = {
  name: 'guestbook-banner',
  /** The manifest as committed, with REGISTRY_URL, REPO_URL and CLUSTER_SERVER to fill in. */
  file: path.join(paths.demo, 'banner-app.yaml'),
  chart: path.join(paths.demo, 'charts/banner'),
  versions: ['0.1.0', '0.2.0'],
  /** What the chart renders (release guestbook): {{ .Release.Name }}-banner. */
  configMap: 'guestbook-banner',
};

/** helm package (each version) and helm push to the registry, with a HOME of its own. */
async function pushCharts(): Promise<void> {
  const helm = obtainedTool('obtain-helm.sh');
  const work = path.join(paths.run, 'charts');
  mkdirSync(work, { recursive: true });
  const env = { PATH: process.env.PATH ?? '', HOME: mkdtempSync(path.join(work, 'helm-home-')) };
  for (const version of bannerApp.versions) {
    await run(helm, ['package', bannerApp.chart, '--version', version, '--destination', work], { env });
    const pushed = await run(
      helm,
      ['push', path.join(work, `banner-${version}.tgz`), story.chartRegistry, '--plain-http'],
      { env },
    );
    const digest = /Digest: (\S+)/.exec(`${pushed.stdout}${pushed.stderr}`)?.[1] ?? '';
    detail(`${story.chartRegistry}/banner:${version} ${digest.slice(0, 19)}`);
  }
}

function renderManifest(repoUrl: string, server: string): string {
  const out = path.join(paths.run, 'banner-app.yaml');
  writeFileSync(
    out,
    readFileSync(bannerApp.file, 'utf8')
      .replaceAll('REGISTRY_URL', story.chartRegistry)
      .replaceAll('REPO_URL', repoUrl)
      .replaceAll('CLUSTER_SERVER', server),
  );
  return out;
}

/** The banner ConfigMap as the cluster holds it (the cluster admin reads it). */
async function banner(cluster: ClusterInfo): Promise<Record<string, string>> {
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.adminKubeconfig);
  const cm = await kc
    .makeApiClient(CoreV1Api)
    .readNamespacedConfigMap({ name: bannerApp.configMap, namespace: story.namespace });
  return cm.data ?? {};
}

async function expectChart(cluster: ClusterInfo, version: string): Promise<void> {
  const data = await banner(cluster);
  detail(`ConfigMap ${story.namespace}/${bannerApp.configMap}: ${JSON.stringify(data)}`);
  if (data.chart !== `banner-${version}` || data.color !== 'teal')
    throw new Error(`${bannerApp.configMap} is not banner ${version} with the values from git`);
}

export async function runChartsChapter(cluster: ClusterInfo, repoUrl: string): Promise<void> {
  heading('Helm: a chart from an OCI registry, its values from git (a multi-source Application)');

  step(
    `package the banner chart with helm (${bannerApp.versions.join(', ')}) and push it to the OCI registry`,
  );
  await pushCharts();
  done();

  step(`register the registry for project ${story.project} (OCI, plain HTTP on loopback)`);
  await capstan([
    'repo',
    'add',
    story.chartRegistry.replace(/^oci:\/\//, ''),
    '--type',
    'helm',
    '--enable-oci',
    '--insecure-oci-force-http',
    '--project',
    story.project,
    '--upsert',
  ]);
  done();

  const receiver = await configureNotifications();
  try {
    await createAndSync(cluster, repoUrl, receiver);
  } finally {
    await receiver.close();
  }

  step(`the history: each deployment with its revision per source`);
  await capstan(['app', 'history', bannerApp.name]);
  done();
}

async function createAndSync(cluster: ClusterInfo, repoUrl: string, receiver: Receiver): Promise<void> {
  step(
    `create ${bannerApp.name}: chart banner 0.2.0 from the registry, $values/banner-values/prod.yaml from git`,
  );
  await capstan(['app', 'create', '-f', renderManifest(repoUrl, cluster.server), '--upsert']);
  done('(subscribed to on-sync-succeeded by its annotation)');

  step(`sync ${bannerApp.name}: one revision per source`);
  await capstan(['app', 'sync', bannerApp.name, '--timeout', '180']);
  await expectChart(cluster, '0.2.0');
  done();
  await showDelivery(receiver, bannerApp.name, 1);

  step("sync the chart's source alone at 0.1.0, as argocd: --revisions 0.1.0 --source-positions 1");
  await capstan([
    'app',
    'sync',
    bannerApp.name,
    '--revisions',
    '0.1.0',
    '--source-positions',
    '1',
    '--timeout',
    '180',
  ]);
  await expectChart(cluster, '0.1.0');
  done('(the values source stayed at its target; spec.sources is unchanged, so the app shows OutOfSync)');
  await showDelivery(receiver, bannerApp.name, 2);
}
