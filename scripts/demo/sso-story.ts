// The story's single sign-on chapter (issue 16), as an Argo CD operator sets it up: argocd-cm's `url`
// and `oidc.config` (its client secret named `$oidc.clientSecret`, a key of argocd-secret), applied with
// `capstan apply -f`; the provider's group team-a-devs is given team-a's project role `developer`
// (Argo's `proj role add-group`). Dana signs in with `capstan login --sso`: the story plays her browser
// at Dex's own login form. Her session carries the provider's groups: she may read and sync team-a's
// Applications and nothing else; her login is an access decision in the audit trail; logout ends it.
import { readFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import { browserLogin } from '@capstan/test/infra';
import { capstan } from './capstan-cli.js';
import { done, heading, step } from './progress.js';
import type { StackSecrets } from './secrets.js';
import { applyArgocdCm, applyArgocdSecret } from './settings-step.js';
import { installation, paths, ports, story } from './stack.js';

const apiUrl = `http://127.0.0.1:${ports.apiHttp}`;
const callback = `http://127.0.0.1:${ports.ssoCallback}/auth/callback`;

/** The api reads applied settings again within 2 s: waits until it offers the provider. */
async function ssoOffered(issuer: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await fetch(`${apiUrl}/api/v1/session/sso`).catch(() => undefined);
    const body = res?.ok ? ((await res.json()) as { enabled?: boolean; issuer?: string }) : {};
    if (body.enabled && body.issuer === issuer) return;
    if (Date.now() > deadline) throw new Error(`the api did not offer single sign-on within 15 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `capstan login --sso` as Dana, into her own CLI configuration; the story is her browser. */
async function ssoLogin(password: string): Promise<void> {
  const user = story.ssoUser;
  let opened: Promise<unknown> | undefined;
  // The browser's failure ends the wait at once (the CLI would wait for a redirect that never comes).
  let browserFailed: (err: unknown) => void = () => undefined;
  const failure = new Promise<never>((_, reject) => (browserFailed = reject));
  const login = capstan(
    [
      'login',
      installation.apiAddress,
      '--sso',
      '--sso-port',
      String(ports.ssoCallback),
      '--name',
      user.username,
    ],
    {
      config: paths.ssoConfig,
      onStderr: (text) => {
        const url = /^(http\S+)$/m.exec(text)?.[1];
        if (!url || opened) return;
        // Dex's login form, then the provider's redirect lands on the CLI's loopback listener.
        opened = browserLogin(url, callback, user.email, password)
          .then((redirect) => fetch(redirect))
          .catch(browserFailed);
      },
    },
  );
  await Promise.race([login, failure]);
  if (!opened) throw new Error('capstan login --sso printed no URL to open');
  await opened;
}

export async function runSsoChapter(issuer: string, secrets: StackSecrets): Promise<void> {
  const user = story.ssoUser;
  const group = user.groups[0]!;
  const as = (args: string[], expectFailure = false) =>
    capstan(args, { config: paths.ssoConfig, expectFailure });
  heading('Single sign-on: people log in with the OIDC provider (Dex here), its groups in RBAC');

  step('argocd-cm gains url and oidc.config; the client secret goes into argocd-secret ($oidc.clientSecret)');
  await applyArgocdCm({
    url: apiUrl,
    'oidc.config': stringify({
      name: 'Dex',
      issuer,
      clientID: 'capstan',
      clientSecret: '$oidc.clientSecret',
      requestedScopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
    }),
  });
  // The whole argocd-secret: the webhook chapter's key stays in it.
  await applyArgocdSecret({
    'webhook.gogs.secret': secrets.webhookSecret,
    'oidc.clientSecret': secrets.dexClientSecret,
  });
  await ssoOffered(issuer);
  done('(live: no restart; the web UI now offers "Log in with Dex")');

  step(`the provider's group ${group} gets ${story.project}'s project role ${story.ssoRole}: get and sync`);
  await capstan([
    'proj',
    'role',
    'create',
    story.project,
    story.ssoRole,
    '--description',
    'team-a developers',
  ]);
  for (const action of ['get', 'sync'])
    await capstan(['proj', 'role', 'add-policy', story.project, story.ssoRole, '-a', action, '-o', '*']);
  await capstan(['proj', 'role', 'add-group', story.project, story.ssoRole, group]);
  done();

  step(`${user.email} signs in: capstan login --sso (the story is her browser at Dex's login form)`);
  await ssoLogin(secrets.ssoPassword);
  done("(the provider's tokens stay with the api; the CLI holds Capstan's own session)");

  step(`as ${user.username}: her groups, ${story.project}'s Applications, a sync allowed, a project refused`);
  await as(['account', 'get-user-info']);
  await as(['app', 'list']);
  await as(['account', 'can-i', 'sync', 'applications', `${story.project}/${story.application}`]);
  const refused = await as(['proj', 'create', 'dana-own', '--dest', '*,dana'], true);
  if (refused.code === 0) throw new Error(`${user.username} could create a project`);
  done();

  step('her login and the refusal are access decisions in the audit trail');
  await capstan(['audit', 'query', 'access_decisions', '--limit', '4']);
  done();

  step('logout ends her session at once: the api refuses it even to someone who kept a copy');
  // The session token, as a copy someone kept (held in memory here, never printed).
  const config = parse(await readFile(paths.ssoConfig, 'utf8')) as {
    contexts: { name: string; token: string }[];
  };
  const kept = config.contexts.find((c) => c.name === user.username)?.token;
  if (!kept) throw new Error(`no session for ${user.username} in ${paths.ssoConfig}`);
  await as(['logout', user.username]);
  const after = await capstan(['app', 'list'], { token: kept, expectFailure: true });
  if (after.code === 0) throw new Error(`${user.username}'s session still works after logout`);
  done();
}
