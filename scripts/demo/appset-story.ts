// The story's second chapter: the same tenant, now with an ApplicationSet. The admin previews the
// set (each generated Application with its verdict), creates it, reads it back, lists the
// Applications it generated (one per folder under addons/ of the demo repository), syncs one of
// them, and shows the API server recorded that write as the tenant's ServiceAccount; then the api's
// access decisions taken for the set and its Applications.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { capstan } from './capstan-cli.js';
import type { ClusterInfo } from './launch.js';
import { done, heading, step } from './progress.js';
import { paths, story } from './stack.js';
import { clusterWrites } from './story.js';

export const addonSet = {
  name: 'guestbook-addons',
  /** The manifest as committed, with REPO_URL and CLUSTER_SERVER to fill in. */
  file: path.join(paths.demo, 'addons-appset.yaml'),
  /** Synced by the chapter: its ConfigMap lands in the tenant's namespace. */
  synced: 'addon-banner',
};

/** The committed manifest with this stack's repository URL and cluster address, under .capstan/run/. */
function renderManifest(repoUrl: string, server: string): string {
  const out = path.join(paths.run, 'addons-appset.yaml');
  const text = readFileSync(addonSet.file, 'utf8')
    .replaceAll('REPO_URL', repoUrl)
    .replaceAll('CLUSTER_SERVER', server);
  writeFileSync(out, text);
  return out;
}

export async function runAppsetChapter(cluster: ClusterInfo, repoUrl: string): Promise<void> {
  const file = renderManifest(repoUrl, cluster.server);
  const since = new Date().toISOString();
  const auditMark = statSync(cluster.auditLogPath).size;

  heading('ApplicationSets: one Application per add-on folder, each checked like a hand-made one');

  step(`preview ${addonSet.name}: the Applications it would generate, and your verdict on each`);
  await capstan(['appset', 'generate', file]);
  done('(nothing written)');

  step(`create ${addonSet.name} (git directories generator over addons/*)`);
  await capstan(['appset', 'create', file, '--upsert']);
  done();

  step('the set, and the Applications it generated');
  await capstan(['appset', 'get', addonSet.name]);
  await capstan(['app', 'list', '--project', story.project]);
  done();

  step(`sync ${addonSet.synced}`);
  await capstan(['app', 'sync', addonSet.synced, '--timeout', '120']);
  done();

  step(`writes to namespace ${story.namespace} since the set was created, from the API server's audit log`);
  await clusterWrites(cluster, auditMark);
  done();

  // Everything the api decided since the chapter began: the checks of each generated Application
  // (preview, the dry run before writing, the write), the repository the generator read, the set's
  // owner recorded for its background reconciles, the reads.
  heading(`Access decisions for ${addonSet.name} and its Applications`);
  await capstan(['audit', 'query', 'access_decisions', '--since', since, '--limit', '25']);
}
