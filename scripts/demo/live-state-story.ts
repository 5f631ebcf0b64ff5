// The story's fourth chapter: live state, told truthfully. What runs is read continuously through
// watches as the tenant's ServiceAccount and compared with git: the guestbook's resources with their
// sync status and health; a hand edit by the cluster admin turns it OutOfSync and `capstan app diff`
// shows the field; automated sync with self-heal puts it back (history says who did it); a new
// Application with automated sync deploys without anyone syncing it, and a rollout whose image
// never pulls is Progressing, then Degraded past its deadline; deleting it removes its resources
// first, as the ServiceAccount.
import { AppsV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { capstan } from './capstan-cli.js';
import type { ClusterInfo } from './launch.js';
import { detail, done, heading, step } from './progress.js';
import { story } from './stack.js';

const canary = { application: 'guestbook-canary', path: 'canary', deployment: 'guestbook-canary' };

interface LiveStatus {
  sync: string;
  health: string;
}

/** The Application's live status as `capstan app get -o json` gives it (undefined once it is gone). */
async function liveStatus(name: string): Promise<LiveStatus | undefined> {
  const run = await capstan(['app', 'get', name, '-o', 'json'], { quiet: true, expectFailure: true });
  if (run.code !== 0) return undefined;
  const status = (JSON.parse(run.stdout) as { status?: Record<string, unknown> }).status ?? {};
  const sync = (status.sync as { status?: string } | undefined)?.status ?? String(status.syncStatus ?? '');
  const health =
    (status.health as { status?: string } | undefined)?.status ?? String(status.healthStatus ?? '');
  return { sync, health };
}

/** Polls until `ok`, then says how long it took; fails the story after `timeoutS`. */
async function waitFor(
  what: string,
  name: string,
  ok: (s: LiveStatus | undefined) => boolean,
  timeoutS = 60,
): Promise<void> {
  const start = Date.now();
  let last: LiveStatus | undefined;
  while (Date.now() - start < timeoutS * 1000) {
    last = await liveStatus(name);
    if (ok(last)) {
      detail(`${what} after ${((Date.now() - start) / 1000).toFixed(1)} s`);
      return;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${name}: not ${what} within ${timeoutS} s (last: ${JSON.stringify(last)})`);
}

/** The cluster admin scales the Deployment by hand, as `kubectl scale` would (its own field manager). */
async function scaleByHand(adminKubeconfig: string, replicas: number): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfig);
  await kc.makeApiClient(AppsV1Api).patchNamespacedDeployment(
    {
      name: 'guestbook-ui',
      namespace: story.namespace,
      body: { spec: { replicas } },
      fieldManager: 'kubectl-scale',
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function deploymentExists(adminKubeconfig: string, name: string): Promise<boolean> {
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfig);
  return kc
    .makeApiClient(AppsV1Api)
    .readNamespacedDeployment({ name, namespace: story.namespace })
    .then(
      () => true,
      () => false,
    );
}

export async function runLiveStateChapter(cluster: ClusterInfo, repoUrl: string): Promise<void> {
  heading('Live state: is what runs what git says, and is it working?');

  step(`${story.application}: each resource compared with git and assessed, read as the ServiceAccount`);
  await waitFor(
    'Synced and Healthy',
    story.application,
    (s) => s?.sync === 'Synced' && s.health === 'Healthy',
  );
  await capstan(['app', 'get', story.application]);
  done();

  step('the cluster admin scales guestbook-ui to 3 by hand (kubectl scale)');
  await scaleByHand(cluster.adminKubeconfig, 3);
  await waitFor('OutOfSync (seen through the watch)', story.application, (s) => s?.sync === 'OutOfSync');
  await capstan(['app', 'diff', story.application], { expectFailure: true });
  done('(exit code 1: there is a difference, as argocd app diff)');

  step('turn on automated sync with self-heal: the drift is undone, as the ServiceAccount');
  await capstan(['app', 'set', story.application, '--sync-policy', 'automated', '--self-heal']);
  await waitFor('Synced again', story.application, (s) => s?.sync === 'Synced');
  await capstan(['app', 'history', story.application]);
  done();

  step(`create ${canary.application} with automated sync: nobody syncs it, and its image never pulls`);
  await capstan([
    'app',
    'create',
    canary.application,
    '--project',
    story.project,
    '--repo',
    repoUrl,
    '--path',
    canary.path,
    '--revision',
    'main',
    '--dest-server',
    cluster.server,
    '--dest-namespace',
    story.namespace,
    '--sync-policy',
    'automated',
    '--upsert',
  ]);
  await waitFor('synced by automation, Progressing', canary.application, (s) => s?.sync === 'Synced');
  await waitFor(
    'Degraded (progressDeadlineSeconds: 20 passed)',
    canary.application,
    (s) => s?.health === 'Degraded',
    90,
  );
  await capstan(['app', 'get', canary.application]);
  done();

  step(`delete ${canary.application}: its Deployment goes first, deleted as the ServiceAccount`);
  // Background: this cluster runs no garbage collector to finish a foreground deletion.
  await capstan(['app', 'delete', canary.application, '-p', 'background', '--yes']);
  await waitFor('gone', canary.application, (s) => s === undefined, 90);
  if (await deploymentExists(cluster.adminKubeconfig, canary.deployment))
    throw new Error(`the Deployment ${canary.deployment} outlived its Application`);
  done(`(Deployment ${canary.deployment} deleted)`);
}
