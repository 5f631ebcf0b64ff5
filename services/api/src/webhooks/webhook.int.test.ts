// The git webhook on the real api, PostgreSQL and NATS: payloads shaped as Argo CD's test fixtures
// (testdata/), signed with the secrets of an applied argocd-secret, become io.capstan.ext.git.push
// events on the bus naming only the Application sources the push concerns; every provider refuses
// a bad or missing signature with 401 and announces nothing; every delivery is audited without its
// secret; the body bound follows an applied argocd-cm; a sender over its rate gets 429.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { NatsConnection, Subscription } from 'nats';
import { apiv1 } from '@capstan/proto';
import { verifyAuditChain } from '@capstan/db';
import { normalizeRepoUrl } from '@capstan/policy';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';

const SECRETS = {
  github: 'github-webhook-secret-0123456789',
  gitlab: 'gitlab-webhook-token-0123456789',
  bitbucket: '{7f3b2a94-5a1e-4c3f-9d6e-1b2c3d4e5f60}',
  bitbucketserver: 'bitbucket-server-secret-0123456789',
  gogs: 'gogs-webhook-secret-0123456789',
};

const fixture = (name: string) => readFileSync(new URL(`./testdata/${name}.json`, import.meta.url));
const hmac = (alg: string, secret: string, body: Buffer) =>
  createHmac(alg, secret).update(body).digest('hex');

interface Post {
  headers: Record<string, string>;
  body: Buffer;
}

/** A delivery per provider, signed with `secret` (or the right one). */
const deliveries = (secret?: Partial<typeof SECRETS>): Record<keyof typeof SECRETS, Post> => {
  const s = { ...SECRETS, ...secret };
  const gh = fixture('github-commit-event');
  const gl = fixture('gitlab-event');
  const bb = fixture('bitbucket-cloud-event');
  const bbs = fixture('bitbucket-server-event');
  const gogs = fixture('gogs-event');
  return {
    github: {
      body: gh,
      headers: { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${hmac('sha256', s.github, gh)}` },
    },
    gitlab: { body: gl, headers: { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': s.gitlab } },
    bitbucket: { body: bb, headers: { 'x-hook-uuid': s.bitbucket, 'x-event-key': 'repo:push' } },
    bitbucketserver: {
      body: bbs,
      headers: {
        'x-event-key': 'repo:refs_changed',
        'x-hub-signature': `sha256=${hmac('sha256', s.bitbucketserver, bbs)}`,
      },
    },
    // Gitea sends Gogs' headers too (and GitHub's: Gogs is tried first, as in Argo CD).
    gogs: {
      body: gogs,
      headers: {
        'x-gogs-event': 'push',
        'x-gitea-event': 'push',
        'x-github-event': 'push',
        'x-gogs-signature': hmac('sha256', s.gogs, gogs),
      },
    },
  };
};

const app = (name: string, repoURL: string, targetRevision: string) => ({
  metadata: { name },
  spec: {
    project: 'hooks',
    source: { repoURL, path: '.', targetRevision },
    destination: { server: 'https://kubernetes.default.svc', namespace: 'hooks' },
  },
});

const APPS = [
  app('gh-master', 'https://github.com/jessesuen/test-repo.git', 'master'),
  app('gh-ssh-head', 'git@github.com:jessesuen/test-repo.git', 'HEAD'),
  app('gh-upper', 'HTTPS://GitHub.com/JesseSuen/Test-Repo', 'refs/heads/master'),
  app('gh-feature', 'https://github.com/jessesuen/test-repo', 'feature'),
  app('gh-other-repo', 'https://github.com/jessesuen/test-repo-2', 'master'),
  app('gitlab', 'https://gitlab.com/group/name.git', 'master'),
  app('bitbucket', 'https://bitbucket.org/argo/argocd-example-apps.git', 'master'),
  app('bitbucket-server', 'ssh://git@bitbucketserver:7999/myproject/test-repo.git', 'master'),
  app('gogs', 'http://gogs-server/john/repo-test', ''),
];

interface PushEvent {
  id: string;
  actor: string;
  data: { repoURL: string; ref?: string; after?: string; revisions?: string[] };
}

describe('git webhook', () => {
  let h: Harness;
  let nc: NatsConnection;
  let sub: Subscription;
  const received: PushEvent[] = [];

  const post = async (p: Post) =>
    fetch(`${h.httpUrl}/api/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...p.headers },
      body: p.body,
    });
  const auditRows = async () =>
    (
      await sql<Record<string, unknown>>`select * from audit.webhook_deliveries order by id`.execute(
        h.api.services.db,
      )
    ).rows;
  /** Publishes the outbox, then gives NATS a moment to deliver to the subscription. */
  const published = async () => {
    await h.api.flushOutbox();
    await new Promise((r) => setTimeout(r, 300));
    return received.splice(0);
  };
  const apply = async (manifests: string) => {
    const c = h.clients();
    const admin = await h.login('admin', ADMIN_PASSWORD);
    return unary(
      c.apply.apply.bind(c.apply),
      { manifests, dryRun: false, strict: false },
      { metadata: bearer(admin) },
    );
  };

  beforeAll(async () => {
    h = await startHarness();
    const c = h.clients();
    const admin = await h.login('admin', ADMIN_PASSWORD);
    const project = {
      metadata: { name: 'hooks' },
      spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
    };
    await unary(
      c.projects.create.bind(c.projects),
      { project: apiv1.Project.fromJSON(project), upsert: false },
      {
        metadata: bearer(admin),
      },
    );
    for (const a of APPS)
      await unary(
        c.applications.create.bind(c.applications),
        { application: apiv1.Application.fromJSON(a), upsert: false },
        {
          metadata: bearer(admin),
        },
      );
    nc = await h.bus.connect('admin');
    sub = nc.subscribe(`${h.bus.namespace}.ext.git.push`);
    void (async () => {
      for await (const m of sub) received.push(JSON.parse(m.string()) as PushEvent);
    })();
    await h.api.flushOutbox();
  });
  afterAll(async () => {
    sub?.unsubscribe();
    await nc?.close();
    await h?.stop();
  });

  it('refuses every provider while no secret is configured (Capstan denies unsigned deliveries by default)', async () => {
    for (const [provider, d] of Object.entries(deliveries())) {
      const res = await post(d);
      expect(res.status, provider).toBe(401);
      expect(await res.text()).toBe('Unauthorized');
    }
    expect(await published()).toEqual([]);
    const rows = await auditRows();
    expect(rows.map((r) => [r.provider, r.outcome, r.http_status])).toEqual(
      ['github', 'gitlab', 'bitbucket', 'bitbucketserver', 'gogs'].map((p) => [p, 'refused', 401]),
    );
    expect(rows[0]!.reason).toBe('no github secret is configured and webhook.allow-unsigned is off');
  });

  it('takes the secrets of an applied argocd-secret at once, sealed', async () => {
    const data = Object.entries({
      'webhook.github.secret': SECRETS.github,
      'webhook.gitlab.secret': SECRETS.gitlab,
      'webhook.bitbucket.uuid': SECRETS.bitbucket,
      'webhook.bitbucketserver.secret': SECRETS.bitbucketserver,
      'webhook.gogs.secret': SECRETS.gogs,
    })
      .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
      .join('\n');
    const r = await apply(
      `apiVersion: v1\nkind: Secret\nmetadata: { name: argocd-secret }\nstringData:\n${data}\n`,
    );
    expect(r.warnings).toEqual([]);
    const res = await post(deliveries().github);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('announces a GitHub push for the sources of that repository and branch only, as Argo CD matches them', async () => {
    const events = await published();
    // One announcement per repository as the repo service compares URLs (normalised: scheme, case,
    // .git), with the target revisions of the matching sources; the payload's own URL is among them.
    const byUrl = new Map(events.map((e) => [normalizeRepoUrl(e.data.repoURL), e.data]));
    expect([...byUrl.keys()].sort()).toEqual([
      'git@github.com/jessesuen/test-repo',
      'https://github.com/jessesuen/test-repo',
    ]);
    const https = byUrl.get('https://github.com/jessesuen/test-repo')!;
    expect({ ...https, revisions: https.revisions?.sort() }).toEqual({
      repoURL: 'https://github.com/jessesuen/test-repo.git',
      ref: 'refs/heads/master',
      before: expect.stringMatching(/^[0-9a-f]{40}$/),
      after: '63738bb582c8b540af7bcfc18f87c575c3ed66e0',
      revisions: ['master', 'refs/heads/master'],
    });
    expect(byUrl.get('git@github.com/jessesuen/test-repo')!.revisions).toEqual(['HEAD']);
    expect(events.every((e) => e.actor === 'webhook:github')).toBe(true);
    const row = (await auditRows()).at(-1)!;
    expect(row).toMatchObject({
      provider: 'github',
      event: 'push',
      repo_url: 'https://github.com/jessesuen/test-repo',
      revision: 'master',
      after_sha: '63738bb582c8b540af7bcfc18f87c575c3ed66e0',
      outcome: 'accepted',
      http_status: 200,
      applications: ['argocd/gh-master', 'argocd/gh-ssh-head', 'argocd/gh-upper'],
    });
    expect((row.event_ids as string[]).sort()).toEqual(events.map((e) => e.id).sort());
  });

  it('announces the same push once within a minute', async () => {
    expect((await post(deliveries().github)).status).toBe(200);
    expect(await published()).toEqual([]);
    expect((await auditRows()).at(-1)).toMatchObject({ outcome: 'duplicate', http_status: 200 });
  });

  it('reads GitLab, Bitbucket Cloud, Bitbucket Server and Gogs/Gitea pushes', async () => {
    const d = deliveries();
    const expected: Record<string, [string, string[]]> = {
      gitlab: ['https://gitlab.com/group/name.git', ['argocd/gitlab']],
      bitbucket: ['https://bitbucket.org/argo/argocd-example-apps.git', ['argocd/bitbucket']],
      bitbucketserver: [
        'ssh://git@bitbucketserver:7999/myproject/test-repo.git',
        ['argocd/bitbucket-server'],
      ],
      gogs: ['http://gogs-server/john/repo-test', ['argocd/gogs']],
    };
    for (const [provider, [url, apps]] of Object.entries(expected)) {
      const res = await post(d[provider as keyof typeof d]);
      expect(res.status, provider).toBe(200);
      const events = await published();
      expect(
        events.map((e) => e.data.repoURL),
        provider,
      ).toContain(url);
      expect(events.find((e) => e.data.repoURL === url)!.actor).toBe(`webhook:${provider}`);
      expect((await auditRows()).at(-1), provider).toMatchObject({
        provider,
        outcome: 'accepted',
        applications: apps,
      });
    }
  });

  it('refuses a wrong or missing signature of every provider with 401 and announces nothing', async () => {
    const wrong = deliveries({
      github: 'not-the-secret',
      gitlab: 'not-the-token',
      bitbucket: '{00000000-0000-0000-0000-000000000000}',
      bitbucketserver: 'not-the-secret',
      gogs: 'not-the-secret',
    });
    const before = (await auditRows()).length;
    for (const [provider, d] of Object.entries(wrong)) {
      expect((await post(d)).status, provider).toBe(401);
      // Unsigned: the signature header left out.
      const unsigned = Object.fromEntries(
        Object.entries(d.headers).filter(([k]) => !/signature|token|uuid/.test(k)),
      );
      // (Bitbucket Cloud without X-Hook-UUID reads as Bitbucket Server, whose signature is missing.)
      expect((await post({ body: d.body, headers: unsigned })).status, provider).toBe(401);
    }
    // A body changed after signing.
    const good = deliveries().github;
    const tampered = Buffer.from(good.body.toString().replace('63738bb5', '00000000'));
    expect((await post({ headers: good.headers, body: tampered })).status).toBe(401);
    expect(await published()).toEqual([]);
    const rows = (await auditRows()).slice(before);
    expect(rows.filter((r) => r.outcome === 'refused')).toHaveLength(11);
    expect(rows.map((r) => r.reason)).toEqual(
      expect.arrayContaining([
        'HMAC verification failed',
        'missing X-Hub-Signature-256 header',
        'token verification failed',
        'UUID verification failed',
      ]),
    );
  });

  it('answers a ping, refuses unknown senders and unhandled events as Argo CD does', async () => {
    const ping = fixture('github-ping-event');
    const pinged = await post({
      body: ping,
      headers: {
        'x-github-event': 'ping',
        'x-hub-signature-256': `sha256=${hmac('sha256', SECRETS.github, ping)}`,
      },
    });
    expect(pinged.status).toBe(200);
    const unknown = await post({ body: Buffer.from('{}'), headers: {} });
    expect([unknown.status, await unknown.text()]).toEqual([400, 'Unknown webhook event']);
    const body = Buffer.from('{}');
    const issue = await post({
      body,
      headers: {
        'x-github-event': 'issues',
        'x-hub-signature-256': `sha256=${hmac('sha256', SECRETS.github, body)}`,
      },
    });
    expect([issue.status, await issue.text()]).toEqual([400, 'Webhook processing failed']);
    expect(await published()).toEqual([]);
    expect((await auditRows()).slice(-3).map((r) => r.outcome)).toEqual(['ignored', 'invalid', 'invalid']);
  });

  it('refuses a body over the applied webhook.maxPayloadSizeMB with 413', async () => {
    await apply(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: argocd-cm }\ndata:\n  webhook.maxPayloadSizeMB: "1"\n',
    );
    const big = Buffer.from(JSON.stringify({ ref: 'refs/heads/master', pad: 'x'.repeat(1024 * 1024 + 10) }));
    const res = await post({
      body: big,
      headers: {
        'x-github-event': 'push',
        'x-hub-signature-256': `sha256=${hmac('sha256', SECRETS.github, big)}`,
      },
    });
    expect(res.status).toBe(413);
    expect(await res.text()).toBe('Webhook processing failed: payload must be valid JSON under 1 MB');
    expect((await auditRows()).at(-1)).toMatchObject({ outcome: 'too-large', http_status: 413 });
  });

  it('never keeps a secret, a signature or the payload in the audit trail', async () => {
    const all = JSON.stringify(await auditRows());
    for (const s of Object.values(SECRETS)) expect(all).not.toContain(s);
    expect(all).not.toContain(hmac('sha256', SECRETS.github, fixture('github-commit-event')));
    expect(all).not.toContain('jessesuen@'); // the fixture's pusher e-mail
    expect(await verifyAuditChain(h.api.services.db, 'webhook_deliveries')).toMatchObject({ ok: true });
  });

  it('answers 429 to a sender over its rate, auditing the refusals without one row each', async () => {
    await h.restart({}, { webhook: { ratePerAddress: 0.01, burst: 2 } });
    const before = (await auditRows()).length;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await post({ body: Buffer.from('{}'), headers: {} })).status);
    expect(statuses).toEqual([400, 400, 429, 429, 429, 429]);
    const rows = (await auditRows()).slice(before);
    expect(rows.map((r) => r.outcome)).toEqual(['invalid', 'invalid', 'throttled']);
    expect(rows[2]!.reason).toBe('rate limit of the sender address');
  });
});
