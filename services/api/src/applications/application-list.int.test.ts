// `app list` against the real api (PostgreSQL, NATS, gRPC and HTTP): a caller sees exactly the
// applications RBAC lets it get, page by page, and every write the moment it is answered, although
// lists are served from applications and encodings kept in memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDb } from '@capstan/db';
import { apiv1 } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { httpClient } from '../test-support/fixtures.js';

const POLICY = `
p, role:team-a-reader, applications, get, team-a/*, allow
g, tenant, role:team-a-reader
p, carol, applications, get, team-b/special, allow
p, dave, applications, get, */*, allow
p, dave, applications, get, team-b/secret, deny
`;

const app = (project: string, name: string, labels: Record<string, string> = {}) =>
  apiv1.Application.fromJSON({
    metadata: { name, labels },
    spec: {
      project,
      source: { repoURL: 'https://git.example.com/apps.git', path: name, targetRevision: 'HEAD' },
      destination: { server: 'https://kubernetes.default.svc', namespace: name },
    },
  });

describe('app list: RBAC and freshness', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let http: ReturnType<typeof httpClient>;
  const tokens: Record<string, string> = {};

  const list = async (who: string, query: Partial<apiv1.ApplicationListQuery> = {}) => {
    const names: string[] = [];
    let pageToken = '';
    do {
      const page = await unary(
        c.applications.list.bind(c.applications),
        { projects: [], selector: '', limit: 0, ...query, pageToken },
        { metadata: bearer(tokens[who]!) },
      );
      names.push(...page.items.map((a) => `${a.spec?.project}/${a.metadata?.name}`));
      pageToken = page.nextPageToken;
    } while (pageToken);
    return names;
  };

  beforeAll(async () => {
    h = await startHarness({ 'rbac.policy-csv': POLICY });
    c = h.clients();
    http = httpClient(h);
    tokens.admin = await h.login('admin', ADMIN_PASSWORD);
    const admin = { metadata: bearer(tokens.admin) };
    for (const name of ['team-a', 'team-b', 'team-c']) {
      await unary(
        c.projects.create.bind(c.projects),
        {
          project: apiv1.Project.fromJSON({
            metadata: { name },
            spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
          }),
          upsert: false,
        },
        admin,
      );
    }
    for (const [project, name] of [
      ['team-a', 'a1'],
      ['team-a', 'a2'],
      ['team-a', 'a3'],
      ['team-b', 'b1'],
      ['team-b', 'special'],
      ['team-b', 'secret'],
      ['team-c', 'c1'],
      ['team-c', 'c2'],
    ] as const) {
      await unary(
        c.applications.create.bind(c.applications),
        { application: app(project, name), upsert: false },
        admin,
      );
    }
    for (const [name, groups] of [
      ['alice', ['tenant']],
      ['carol', ['tenant']],
      ['dave', []],
      ['bob', []],
    ] as const) {
      await unary(
        c.accounts.create.bind(c.accounts),
        { name, password: `${name}-password`, capabilities: ['login'], groups: [...groups] },
        admin,
      );
      tokens[name] = await h.login(name, `${name}-password`);
    }
  });
  afterAll(async () => h?.stop());

  it('shows each caller only the applications it may get, over gRPC and HTTP, on every page', async () => {
    const expected: Record<string, string[]> = {
      alice: ['team-a/a1', 'team-a/a2', 'team-a/a3'],
      carol: ['team-a/a1', 'team-a/a2', 'team-a/a3', 'team-b/special'],
      dave: ['team-a/a1', 'team-a/a2', 'team-a/a3', 'team-b/b1', 'team-b/special', 'team-c/c1', 'team-c/c2'],
      bob: [],
    };
    for (const [who, names] of Object.entries(expected)) {
      const sorted = (xs: string[]) =>
        [...xs].sort((x, y) => x.split('/')[1]!.localeCompare(y.split('/')[1]!));
      expect(await list(who), who).toEqual(sorted(names));
      // Pages of one and two (RBAC filters rows out between pages) give the same applications once each.
      expect(await list(who, { limit: 1 }), `${who} by 1`).toEqual(sorted(names));
      expect(await list(who, { limit: 2 }), `${who} by 2`).toEqual(sorted(names));
      const viaHttp = await http('GET', '/api/v1/applications', tokens[who]);
      expect(viaHttp.status).toBe(200);
      expect(
        viaHttp.body.items.map(
          (a: { spec: { project: string }; metadata: { name: string } }) =>
            `${a.spec.project}/${a.metadata.name}`,
        ),
      ).toEqual(sorted(names));
    }
    expect(await list('carol', { projects: ['team-b'] })).toEqual(['team-b/special']);
    expect(await list('dave', { projects: ['team-b', 'team-c'], selector: '' })).toEqual([
      'team-b/b1',
      'team-c/c1',
      'team-c/c2',
      'team-b/special',
    ]);
  });

  it('answers a list right after a write with the write in it', async () => {
    const admin = { metadata: bearer(tokens.admin!) };
    expect(await list('alice')).not.toContain('team-a/a4'); // the applications are now in memory
    await unary(
      c.applications.create.bind(c.applications),
      { application: app('team-a', 'a4'), upsert: false },
      admin,
    );
    expect(await list('alice')).toContain('team-a/a4');

    const before = await unary(
      c.applications.list.bind(c.applications),
      { projects: ['team-a'], selector: 'tier=web', limit: 0, pageToken: '' },
      { metadata: bearer(tokens.alice!) },
    );
    expect(before.items).toHaveLength(0);
    const updated = await unary(
      c.applications.update.bind(c.applications),
      { name: 'a4', application: app('team-a', 'a4', { tier: 'web' }) },
      admin,
    );
    const after = await unary(
      c.applications.list.bind(c.applications),
      { projects: ['team-a'], selector: 'tier=web', limit: 0, pageToken: '' },
      { metadata: bearer(tokens.alice!) },
    );
    expect(
      after.items.map((a) => [a.metadata?.name, a.metadata?.resourceVersion, a.metadata?.labels]),
    ).toEqual([['a4', updated.metadata?.resourceVersion, { tier: 'web' }]]);
    const listed = (
      await unary(
        c.applications.list.bind(c.applications),
        { projects: [], selector: '', limit: 0, pageToken: '' },
        { metadata: bearer(tokens.alice!) },
      )
    ).items.find((a) => a.metadata?.name === 'a4');
    const got = await unary(
      c.applications.get.bind(c.applications),
      { name: 'a4', appNamespace: '', project: '' },
      { metadata: bearer(tokens.alice!) },
    );
    expect(listed).toEqual(got);

    // Moving an application to a project the caller may not read hides it at once.
    await unary(
      c.applications.update.bind(c.applications),
      { name: 'a4', application: app('team-c', 'a4') },
      admin,
    );
    expect(await list('alice')).not.toContain('team-a/a4');
    expect(await list('dave')).toContain('team-c/a4');

    await unary(
      c.applications.delete.bind(c.applications),
      { name: 'a4', appNamespace: '', cascade: false, propagationPolicy: '' },
      admin,
    );
    expect(await list('dave')).not.toContain('team-c/a4');
  });

  it('shows a status written by another replica (the row changed in PostgreSQL) at once', async () => {
    const status = async () =>
      (
        await unary(
          c.applications.list.bind(c.applications),
          { projects: ['team-a'], selector: '', limit: 0, pageToken: '' },
          { metadata: bearer(tokens.alice!) },
        )
      ).items.find((a) => a.metadata?.name === 'a1')?.status;
    expect((await status())?.health?.status).toBe('Unknown');
    await sql`update api.applications set sync_status = 'Synced', health_status = 'Healthy', revision = 'abc' where name = 'a1'`.execute(
      h.api.services.db,
    );
    expect(await status()).toMatchObject({
      sync: { status: 'Synced', revision: 'abc' },
      health: { status: 'Healthy' },
    });
  });
  it('reads only the projects the caller may see something of once a page leaves it short', async () => {
    // bob may get nothing. A page of one finds team-a/a1 denied; the policy decides team-a and
    // team-c as a whole (denied to him), but not team-b (carol's line names one of its applications),
    // so only team-b's b1, secret and special are read after a1, not c1 and c2: 4 scanned, not 8.
    // carol may get team-a/* and team-b/special: after b1 (denied) only team-b is read, not team-c.
    expect(await list('bob', { limit: 1 })).toEqual([]);
    expect(await list('carol', { limit: 1 })).toContain('team-b/special');
    const db = createDb(h.db.url);
    try {
      const reasons = async (subject: string) =>
        (
          await sql<{ reason: string }>`
            select reason from audit.access_decisions
             where subject = ${subject} and resource = 'applications' and action = 'list' order by id`.execute(
            db,
          )
        ).rows.map((r) => r.reason);
      // Reads are audited in batches: wait for the rows.
      const deadline = Date.now() + 10_000;
      while (
        !(await reasons('user:carol')).some((r) => r.startsWith('listed 1 of 3 ')) &&
        Date.now() < deadline
      )
        await new Promise((r) => setTimeout(r, 100));
      expect(await reasons('user:bob')).toContain(
        'listed 0 of 4 applications scanned that the caller may get',
      );
      // The page after team-b/b1 (denied): b1, then only team-b's secret and special, not team-c's c1, c2.
      expect(await reasons('user:carol')).toContain(
        'listed 1 of 3 applications scanned that the caller may get',
      );
    } finally {
      await db.destroy();
    }
  });
});
