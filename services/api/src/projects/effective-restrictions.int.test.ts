// ProjectService.GetEffectiveRestrictions (the project page's intersected restrictions), on real
// PostgreSQL and NATS: computed by effectiveRestrictions of @capstan/policy over the stored chain,
// for a caller with `projects, get` on the project; the entries of a parent the caller may not get
// are withheld; a caller without the right is refused with Argo CD's text, and that is audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { status } from '@grpc/grpc-js';
import { createDb } from '@capstan/db';
import { apiv1 } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError, httpClient } from '../test-support/fixtures.js';

const IN_CLUSTER = 'https://kubernetes.default.svc';
const POLICY = `
p, role:team-a-reader, projects, get, team-a, allow
g, reader, role:team-a-reader
`;
const PATH = '/api/v1/projects/team-a/effective-restrictions';
/** One entry as the api answers it (every field, as the other operations' HTTP answers). */
const entry = (value: string, project: string, more: Record<string, unknown> = {}) => ({
  value,
  project,
  deny: false,
  boundedBy: '',
  withheld: false,
  ...more,
});

describe("api: a project's effective restrictions under its parent chain", () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let http: ReturnType<typeof httpClient>;
  let admin: string;
  let reader: string;
  let outsider: string;

  const create = (metadata: { name: string }, spec: Record<string, unknown>) =>
    unary(
      c.projects.create.bind(c.projects),
      { project: apiv1.Project.fromJSON({ metadata, spec }), upsert: false },
      { metadata: bearer(admin) },
    );

  beforeAll(async () => {
    h = await startHarness({ 'rbac.policy-csv': POLICY });
    c = h.clients();
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
    await create(
      { name: 'platform' },
      {
        sourceRepos: ['https://git.example.com/**', '!https://git.example.com/secrets'],
        destinations: [
          { server: IN_CLUSTER, namespace: 'team-*' },
          { server: '*', namespace: '!kube-system' },
        ],
        namespaceResourceWhitelist: [{ group: 'apps', kind: 'Deployment' }],
        destinationServiceAccounts: [
          { server: IN_CLUSTER, namespace: 'team-*', defaultServiceAccount: 'deployer' },
        ],
      },
    );
    await create(
      { name: 'team-a' },
      {
        parentProject: 'platform',
        sourceRepos: ['https://git.example.com/team-a/apps.git'],
        destinations: [{ server: IN_CLUSTER, namespace: 'team-a-*' }],
      },
    );
    for (const name of ['reader', 'outsider'])
      expect(
        (await http('POST', '/api/v1/account', admin, { name, password: `${name}-password-1` })).status,
      ).toBe(200);
    reader = await h.login('reader', 'reader-password-1');
    outsider = await h.login('outsider', 'outsider-password-1');
  });
  afterAll(async () => h?.stop());

  it('answers the intersection along the chain, each entry with the project that declares it', async () => {
    const res = await http('GET', PATH, admin);
    expect(res.status).toBe(200);
    expect(res.body.chain).toEqual(['team-a', 'platform']);
    expect(res.body.sourceRepos).toEqual([
      entry('https://git.example.com/team-a/apps.git', 'team-a'),
      entry('!https://git.example.com/secrets', 'platform', { deny: true }),
    ]);
    expect(res.body.destinations).toEqual([
      entry(`${IN_CLUSTER} / team-a-*`, 'team-a'),
      entry('* / !kube-system', 'platform', { deny: true }),
    ]);
    expect(res.body.namespaceResources).toEqual([entry('apps/Deployment', 'platform')]);
    expect(res.body.destinationServiceAccounts).toEqual([
      entry(`${IN_CLUSTER} / team-* → deployer`, 'platform'),
    ]);
    // The same operation over gRPC.
    const grpc = await unary(
      c.projects.getEffectiveRestrictions.bind(c.projects),
      { name: 'team-a' },
      { metadata: bearer(admin) },
    );
    const json = apiv1.EffectiveRestrictions.toJSON;
    expect(json(grpc)).toEqual(json(apiv1.EffectiveRestrictions.fromJSON(res.body)));
    expect(grpc.sourceRepos).toHaveLength(2);
  });

  it('withholds the entries of a parent the caller may not get', async () => {
    const res = await http('GET', PATH, reader);
    expect(res.status).toBe(200);
    expect(res.body.sourceRepos).toEqual([
      entry('https://git.example.com/team-a/apps.git', 'team-a'),
      entry('', 'platform', { deny: true, withheld: true }),
    ]);
    expect(JSON.stringify(res.body)).not.toContain('secrets');
    expect(JSON.stringify(res.body)).not.toContain('deployer');
  });

  it("refuses a caller without projects, get with Argo CD's text, audited; a missing project is 404", async () => {
    const res = await http('GET', PATH, outsider);
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('permission denied: projects, get, team-a (outsider)');
    const err = await grpcError(
      unary(
        c.projects.getEffectiveRestrictions.bind(c.projects),
        { name: 'team-a' },
        { metadata: bearer(outsider) },
      ),
    );
    expect(err.code).toBe(status.PERMISSION_DENIED);
    const db = createDb(h.db.url);
    try {
      const rows = await sql<{ via: string }>`
        select via from audit.access_decisions
         where subject = 'user:outsider' and resource = 'projects' and action = 'get'
           and object = 'team-a' and decision = 'deny' order by id`.execute(db);
      expect(rows.rows.map((r) => r.via)).toEqual(['http', 'grpc']);
    } finally {
      await db.destroy();
    }
    expect((await http('GET', '/api/v1/projects/gone/effective-restrictions', admin)).status).toBe(404);
  });
});
