// Tenants on the real api (PostgreSQL, NATS, gRPC/HTTP): project roles grant clusters (and
// repositories) inside their project as Argo CD's do; a mutation is authorised against the object
// as it is and as it will be, so one tenant cannot move another's cluster into its own project;
// Applications whose repository URL could inject options into git or ssh, or whose path leaves the
// repository, are refused when written, with the field named, and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startHarness, type Harness } from '../test-support/harness.js';
import { guestbook, httpClient } from '../test-support/fixtures.js';

const SERVER = 'https://10.0.0.1:6443';

const project = (name: string) => ({
  metadata: { name },
  spec: {
    sourceRepos: [`https://git.example.com/${name}/*`],
    destinations: [{ server: '*', namespace: `${name}-*` }],
    roles: [
      {
        name: 'admin',
        policies: [
          `p, proj:${name}:admin, clusters, create, ${name}/*, allow`,
          `p, proj:${name}:admin, clusters, update, ${name}/*, allow`,
          `p, proj:${name}:admin, clusters, get, ${name}/*, allow`,
          `p, proj:${name}:admin, repositories, create, ${name}/*, allow`,
          `p, proj:${name}:admin, applications, *, ${name}/*, allow`,
        ],
        groups: [`tenant-${name}`],
      },
    ],
  },
});

describe('api: project-scoped clusters and Application sources', () => {
  let h: Harness;
  let http: ReturnType<typeof httpClient>;
  let admin: string;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    h = await startHarness();
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
    for (const name of ['team-a', 'team-b']) {
      const res = await http('POST', '/api/v1/projects', admin, { project: project(name) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    for (const [user, group] of [
      ['alice', 'tenant-team-a'],
      ['bob', 'tenant-team-b'],
    ] as const) {
      const res = await http('POST', '/api/v1/account', admin, {
        name: user,
        password: `${user}-password`,
        groups: [group],
        capabilities: ['login'],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    alice = await h.login('alice', 'alice-password');
    bob = await h.login('bob', 'bob-password');
  });
  afterAll(async () => h?.stop());

  it('lets a project role register a cluster in its own project, and only there', async () => {
    const created = await http('POST', '/api/v1/clusters', alice, {
      server: SERVER,
      name: 'a-prod',
      project: 'team-a',
      config: { bearerToken: 'alice-token', tlsClientConfig: { insecure: true } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ server: SERVER, project: 'team-a' });
    const unscoped = await http('POST', '/api/v1/clusters', alice, {
      server: 'https://10.0.0.2:6443',
      name: 'global',
      config: { bearerToken: 'x', tlsClientConfig: { insecure: true } },
    });
    expect(unscoped.status).toBe(403);
    expect((await http('GET', `/api/v1/clusters/${encodeURIComponent(SERVER)}`, bob)).status).toBe(403);
    const bobsList = await http('GET', '/api/v1/clusters', bob);
    expect(bobsList.body.items ?? []).toEqual([]);
  });

  it("refuses moving another project's cluster into one's own, and leaves it as it was", async () => {
    for (const method of ['POST', 'PUT'] as const) {
      const path = method === 'POST' ? '/api/v1/clusters' : `/api/v1/clusters/${encodeURIComponent(SERVER)}`;
      const res = await http(method, path, bob, {
        server: SERVER,
        name: 'a-prod',
        project: 'team-b',
        upsert: true,
        config: { bearerToken: 'bob-token', tlsClientConfig: { insecure: true } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(JSON.stringify(res.body)).not.toContain('team-a');
    }
    const still = await http('GET', `/api/v1/clusters/${encodeURIComponent(SERVER)}`, admin);
    expect(still.body).toMatchObject({ server: SERVER, project: 'team-a' });
  });

  it.each([
    ['spec.source.repoURL', { repoURL: 'ssh://-oProxyCommand=touch%20/tmp/pwned/x' }],
    ['spec.source.repoURL', { repoURL: 'git@h:--upload-pack=touch' }],
    ['spec.source.repoURL', { repoURL: 'ext::sh -c touch% /tmp/pwned' }],
    ['spec.source.repoURL', { repoURL: 'fd::7' }],
    ['spec.source.repoURL', { repoURL: 'file:///etc' }],
    ['spec.source.path', { path: '../../etc' }],
    ['spec.source.path', { path: '/etc' }],
    ['spec.source.path', { path: 'a\\..\\..\\etc' }],
    ['spec.source.path', { path: 'guestbook/../../..' }],
  ])('refuses an Application whose %s could escape (%j), storing nothing', async (field, change) => {
    const app = guestbook('team-a', `bad-${Math.random().toString(36).slice(2, 8)}`);
    Object.assign(app.spec.source, change);
    const res = await http('POST', '/api/v1/applications', alice, { application: app });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    expect((await http('GET', `/api/v1/applications/${app.metadata.name}`, admin)).status).toBe(404);
  });

  it('accepts the same Application with a repository URL and path that stay where they belong', async () => {
    const app = guestbook('team-a', 'good');
    app.spec.source.repoURL = 'https://git.example.com/team-a/apps.git';
    app.spec.source.path = './guestbook/../guestbook';
    const res = await http('POST', '/api/v1/applications', alice, { application: app });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
});
