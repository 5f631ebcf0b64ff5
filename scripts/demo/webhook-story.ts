// The story's webhook chapter (issue 16): the operator puts a webhook secret into argocd-secret with
// `capstan apply -f`, as Argo CD's; a commit changes the guestbook's ConfigMap in git; a forged
// delivery to POST /api/webhook is refused, and the git server's signed push delivery (Gitea's shape)
// has the guestbook (automated since the live-state chapter) synced at the new commit within
// seconds. The repo service polls every 3 minutes here, so only the webhook can have told it.
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { capstan } from './capstan-cli.js';
import { detail, done, heading, step } from './progress.js';
import { applyArgocdSecret } from './settings-step.js';
import { paths, ports, story } from './stack.js';

const run = promisify(execFile);
/** The git server's own work tree of the story's repository (it commits through it; see test/src/git). */
const workTree = () => path.join(paths.git, 'work', story.repository);

async function git(args: string[]): Promise<string> {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'platform team',
    GIT_AUTHOR_EMAIL: 'platform@example.com',
    GIT_COMMITTER_NAME: 'platform team',
    GIT_COMMITTER_EMAIL: 'platform@example.com',
  };
  return (await run('git', args, { cwd: workTree(), env })).stdout.trim();
}

/** Commits a new guestbook title and pushes it to the served repository; returns the commit. */
async function commitTitle(title: string): Promise<{ before: string; after: string }> {
  const before = await git(['rev-parse', 'HEAD']);
  const file = path.join(workTree(), 'guestbook', 'configmap.yaml');
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace(/GUESTBOOK_TITLE: .*/, `GUESTBOOK_TITLE: ${title}`));
  await git(['commit', '--quiet', '-am', `guestbook: title "${title}"`]);
  await git(['push', '--quiet', 'origin', 'HEAD:refs/heads/main']);
  return { before, after: await git(['rev-parse', 'HEAD']) };
}

/** A Gitea push delivery (Gitea sends Gogs' and GitHub's event headers too), signed with `secret`. */
function deliver(repoUrl: string, push: { before: string; after: string }, secret: string) {
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    before: push.before,
    after: push.after,
    repository: { name: 'guestbook', clone_url: repoUrl, html_url: repoUrl, default_branch: 'main' },
    commits: [{ id: push.after, message: 'guestbook: title', modified: ['guestbook/configmap.yaml'] }],
  });
  const signature = createHmac('sha256', secret).update(body).digest('hex');
  return fetch(`http://127.0.0.1:${ports.apiHttp}/api/webhook`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gitea-event': 'push',
      'x-gogs-event': 'push',
      'x-gitea-signature': signature,
      'x-gogs-signature': signature,
    },
    body,
  });
}

async function syncedRevision(name: string): Promise<string | undefined> {
  const r = await capstan(['app', 'get', name, '-o', 'json'], { quiet: true, expectFailure: true });
  if (r.code !== 0) return undefined;
  const sync = (JSON.parse(r.stdout) as { status?: { sync?: { status?: string; revision?: string } } }).status
    ?.sync;
  return sync?.status === 'Synced' ? sync.revision : undefined;
}

export async function runWebhookChapter(repoUrl: string, secret: string): Promise<void> {
  heading("Git webhooks (Argo CD's POST /api/webhook)");
  step("the webhook secret goes into argocd-secret, as Argo CD's: `capstan apply -f argocd-secret.yaml`");
  await applyArgocdSecret({ 'webhook.gogs.secret': secret });
  done('(kept sealed; events and audit rows name the key only)');

  step(`a commit changes ${story.application}'s ConfigMap in git`);
  const push = await commitTitle('Capstan guestbook, told by a webhook');
  done(`(${push.after.slice(0, 7)})`);

  step('a delivery signed with another secret is refused, and triggers nothing');
  const forged = await deliver(repoUrl, push, 'not-the-secret');
  if (forged.status !== 401) throw new Error(`a forged delivery got ${forged.status}, not 401`);
  done(`(HTTP ${forged.status})`);

  step(`the git server's signed push delivery: ${story.application} is synced at the new commit`);
  const started = Date.now();
  const delivered = await deliver(repoUrl, push, secret);
  detail(`POST /api/webhook → HTTP ${delivered.status} ${await delivered.text()}`);
  while ((await syncedRevision(story.application)) !== push.after) {
    if (Date.now() - started > 90_000)
      throw new Error(`${story.application} was not synced at ${push.after} within 90 s of the webhook`);
    await new Promise((r) => setTimeout(r, 500));
  }
  done(
    `(${((Date.now() - started) / 1000).toFixed(1)} s after the delivery; the repo service polls every 180 s)`,
  );
  await capstan(['audit', 'query', 'webhooks', '--limit', '2']);
}
