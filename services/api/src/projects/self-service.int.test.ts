// Issue 12: self-service AppProjects through the API, on real PostgreSQL and NATS. A developer with
// `projects, create` may create a project only under a parent it may update, and only within that
// parent's bounds; an unbounded project stays an admin action; moving a project between parents
// needs `projects, update` on both; every refusal says why, and the audit trail says it too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { apiv1, fieldViolationsOf } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError, httpClient } from '../test-support/fixtures.js';

const IN_CLUSTER = 'https://kubernetes.default.svc';
const POLICY = `
p, role:developer, projects, create, team-*, allow
p, role:developer, projects, update, team-*, allow
p, role:developer, projects, get, team-*, allow
p, role:developer, projects, get, dev-namespaces-only, allow
p, role:developer, projects, update, dev-namespaces-only, allow
p, role:developer, projects, get, no-cluster-resources, allow
g, dev, role:developer
`;

describe('api: self-service projects under a parent', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let http: ReturnType<typeof httpClient>;
  let admin: string;
  let dev: string;

  const create = (token: string, metadata: { name: string }, spec: Record<string, unknown>) =>
    unary(
      c.projects.create.bind(c.projects),
      { project: apiv1.Project.fromJSON({ metadata, spec }), upsert: false },
      { metadata: bearer(token) },
    );
  const get = (name: string) => unary(c.projects.get.bind(c.projects), { name }, { metadata: bearer(admin) });
  const setParent = async (token: string, name: string, parent: string) => {
    const p = await get(name);
    return unary(
      c.projects.update.bind(c.projects),
      { project: { ...p, spec: { ...p.spec!, parentProject: parent } } },
      { metadata: bearer(token) },
    );
  };
  const denials = async (object: string) => {
    await h.api.services.authz.flush();
    const rows = await unary(
      c.audit.query.bind(c.audit),
      apiv1.AuditQuery.fromPartial({ table: 'access_decisions', user: 'user:dev', outcome: 'deny' }),
      { metadata: bearer(admin) },
    );
    return rows.rows.filter((r) => r.fields?.object === object).map((r) => r.fields?.reason);
  };

  beforeAll(async () => {
    h = await startHarness({ 'rbac.policy-csv': POLICY });
    c = h.clients();
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
    await create(
      admin,
      { name: 'dev-namespaces-only' },
      {
        sourceRepos: ['https://git.example.com/dev/*'],
        destinations: [{ server: IN_CLUSTER, namespace: 'dev-*' }],
        destinationServiceAccounts: [
          { server: IN_CLUSTER, namespace: 'dev-*', defaultServiceAccount: 'deployer' },
        ],
      },
    );
    await create(
      admin,
      { name: 'no-cluster-resources' },
      {
        sourceRepos: ['*'],
        destinations: [{ server: '*', namespace: '*' }],
        destinationServiceAccounts: [
          { server: IN_CLUSTER, namespace: 'dev-*', defaultServiceAccount: 'deployer' },
        ],
      },
    );
    await create(admin, { name: 'admins-only' }, { sourceRepos: ['*'] });
    const made = await http('POST', '/api/v1/account', admin, { name: 'dev', password: 'dev-password-1' });
    expect(made.status).toBe(200);
    dev = await h.login('dev', 'dev-password-1');
  });
  afterAll(async () => h?.stop());

  it('given a developer, when creating a project without a parent, then PERMISSION_DENIED says why and the audit row too', async () => {
    const err = await grpcError(create(dev, { name: 'team-root' }, { sourceRepos: ['*'] }));
    expect(err.code).toBe(status.PERMISSION_DENIED);
    expect(err.details).toBe(
      'only admins may create project team-root without spec.parentProject; a project you create must name a parent project that bounds it (capstan proj create team-root --parent PARENT)',
    );
    expect(await denials('team-root')).toContain(err.details);
    expect((await http('GET', '/api/v1/projects/team-root', admin)).status).toBe(404);
  });

  it('given a developer, when creating a child within its parent, then it is created', async () => {
    const p = await create(
      dev,
      { name: 'team-x' },
      {
        parentProject: 'dev-namespaces-only',
        sourceRepos: ['https://git.example.com/dev/team-x'],
        destinations: [{ server: IN_CLUSTER, namespace: 'dev-team-x' }],
        destinationServiceAccounts: [
          { server: IN_CLUSTER, namespace: 'dev-team-x', defaultServiceAccount: 'deployer' },
        ],
      },
    );
    expect(p.spec?.parentProject).toBe('dev-namespaces-only');
  });

  it('given a child wider than its parent, when created, then INVALID_ARGUMENT names field, value and ancestor, and nothing is stored', async () => {
    const err = await grpcError(
      create(
        dev,
        { name: 'team-wide' },
        {
          parentProject: 'dev-namespaces-only',
          sourceRepos: ['https://git.example.com/dev/team-wide'],
          destinations: [{ server: IN_CLUSTER, namespace: 'kube-system' }],
          destinationServiceAccounts: [
            { server: IN_CLUSTER, namespace: 'dev-wide', defaultServiceAccount: 'kube-system:admin' },
          ],
        },
      ),
    );
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(fieldViolationsOf(err)).toEqual([
      {
        field: 'spec.destinations[0]',
        description: `destination server "${IN_CLUSTER}", namespace "kube-system" is not allowed by ancestor project "dev-namespaces-only": it is not within any of its spec.destinations`,
      },
      {
        field: 'spec.destinationServiceAccounts[0]',
        description: expect.stringContaining('resolves "deployer" where this rule may apply'),
      },
    ]);
    expect((await denials('team-wide'))[0]).toMatch(/^project team-wide is wider than its parent chain: /);
    expect((await http('GET', '/api/v1/projects/team-wide', admin)).status).toBe(404);
  });

  it('given a parent the developer may not see, when creating under it, then PERMISSION_DENIED names the missing right', async () => {
    const err = await grpcError(create(dev, { name: 'team-y' }, { parentProject: 'admins-only' }));
    expect(err.code).toBe(status.PERMISSION_DENIED);
    expect(err.details).toBe(
      'permission denied: projects, update, admins-only (dev) is needed to create project team-y under parentProject admins-only',
    );
    expect(await denials('admins-only')).toContain(
      'no policy line allows (needed to create project team-y under parentProject admins-only)',
    );
  });

  it('given a bounded child, when its owner edits it, then the edit is accepted; removing the parent is refused', async () => {
    const p = await get('team-x');
    const edited = await unary(
      c.projects.update.bind(c.projects),
      { project: { ...p, spec: { ...p.spec!, description: 'edited by dev' } } },
      { metadata: bearer(dev) },
    );
    expect(edited.spec?.description).toBe('edited by dev');
    const err = await grpcError(setParent(dev, 'team-x', ''));
    expect(err.code).toBe(status.PERMISSION_DENIED);
    expect(err.details).toBe(
      'only admins may remove spec.parentProject of project team-x: it would no longer be bounded by dev-namespaces-only',
    );
  });

  it('given a move to another parent, then it needs update on the old parent and on the new one', async () => {
    const err = await grpcError(setParent(dev, 'team-x', 'no-cluster-resources'));
    expect(err.code).toBe(status.PERMISSION_DENIED);
    expect(err.details).toBe(
      'permission denied: projects, update, no-cluster-resources (dev) is needed to move project team-x under parentProject no-cluster-resources',
    );
    expect((await get('team-x')).spec?.parentProject).toBe('dev-namespaces-only');
    // the admin may; moving it back out of no-cluster-resources needs update there, which the developer lacks
    const moved = await setParent(admin, 'team-x', 'no-cluster-resources');
    expect(moved.spec?.parentProject).toBe('no-cluster-resources');
    const back = await grpcError(setParent(dev, 'team-x', 'dev-namespaces-only'));
    expect(back.details).toBe(
      'permission denied: projects, update, no-cluster-resources (dev) is needed to move project team-x out of parentProject no-cluster-resources',
    );
  });

  it('given an unbounded project, when a developer with update rights on it edits it, then only admins may', async () => {
    await create(admin, { name: 'team-legacy' }, { sourceRepos: ['*'] });
    const p = await get('team-legacy');
    const err = await grpcError(
      unary(
        c.projects.update.bind(c.projects),
        {
          project: {
            ...p,
            spec: { ...p.spec!, destinations: [{ server: '*', namespace: 'argocd', name: '' }] },
          },
        },
        { metadata: bearer(dev) },
      ),
    );
    expect(err.code).toBe(status.PERMISSION_DENIED);
    expect(err.details).toBe(
      'only admins may change project team-legacy: it has no spec.parentProject, so nothing bounds it',
    );
  });

  it('given fields Capstan does not implement, when written over HTTP, then 400 says not supported', async () => {
    const res = await http('POST', '/api/v1/projects', admin, {
      project: {
        metadata: { name: 'team-signed' },
        spec: {
          sourceRepos: ['*'],
          signatureKeys: [{ keyID: '4AEE18F83AFDEB23' }],
          orphanedResources: { warn: true },
        },
      },
    });
    expect(res.status).toBe(400);
    expect(
      res.body.details.map((d: { field: string; description: string }) => [
        d.field,
        d.description.split(':')[0],
      ]),
    ).toEqual([
      ['spec.signatureKeys', 'not supported'],
      ['spec.orphanedResources', 'not supported yet'],
    ]);
  });

  it('given sync windows, when written over HTTP, then valid ones are stored and a bad schedule is refused with its path', async () => {
    const windows = [
      {
        kind: 'deny',
        schedule: '0 22 * * *',
        duration: '8h',
        timeZone: 'Europe/Paris',
        applications: ['*'],
        manualSync: true,
      },
    ];
    const ok = await http('POST', '/api/v1/projects', admin, {
      project: { metadata: { name: 'team-windows' }, spec: { sourceRepos: ['*'], syncWindows: windows } },
    });
    expect(ok.status).toBe(200);
    expect((await http('GET', '/api/v1/projects/team-windows', admin)).body.spec.syncWindows).toEqual(
      windows,
    );
    const bad = await http('POST', '/api/v1/projects', admin, {
      project: {
        metadata: { name: 'team-bad-windows' },
        spec: { syncWindows: [{ ...windows[0], schedule: '0 25 * * *' }] },
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].field).toBe('spec.syncWindows[0].schedule');
  });
});

describe('api: destinations by cluster name and project-scoped clusters at write time', () => {
  let h: Harness;
  let http: ReturnType<typeof httpClient>;
  let admin: string;
  const PROD = 'https://10.0.0.1:6443';
  const app = (name: string, project: string, destination: Record<string, string>, namespace = 'argocd') => ({
    application: {
      metadata: { name, namespace },
      spec: {
        project,
        source: { repoURL: 'https://git.example.com/apps.git', path: name, targetRevision: 'HEAD' },
        destination,
      },
    },
  });

  beforeAll(async () => {
    h = await startHarness();
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
    const c = h.clients();
    await unary(
      c.clusters.create.bind(c.clusters),
      apiv1.ClusterCreateRequest.fromPartial({
        server: PROD,
        name: 'prod',
        config: { bearerToken: 'x-token' },
      }),
      { metadata: bearer(admin) },
    );
    for (const project of [
      {
        metadata: { name: 'by-name' },
        spec: { sourceRepos: ['*'], destinations: [{ name: 'prod', namespace: 'web' }] },
      },
      {
        metadata: { name: 'scoped-only' },
        spec: {
          sourceRepos: ['*'],
          destinations: [{ server: '*', namespace: '*' }],
          permitOnlyProjectScopedClusters: true,
        },
      },
    ])
      expect((await http('POST', '/api/v1/projects', admin, { project })).status).toBe(200);
  });
  afterAll(async () => h?.stop());

  it('given a project listing a cluster by name, when an Application names it by server, then it is permitted', async () => {
    expect(
      (
        await http(
          'POST',
          '/api/v1/applications',
          admin,
          app('web', 'by-name', { server: PROD, namespace: 'web' }),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await http(
          'POST',
          '/api/v1/applications',
          admin,
          app('web2', 'by-name', { name: 'prod', namespace: 'web' }),
        )
      ).status,
    ).toBe(200);
    const refused = await http(
      'POST',
      '/api/v1/applications',
      admin,
      app('db', 'by-name', { server: PROD, namespace: 'db' }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.details[0].field).toBe('spec.destination');
  });

  it('given permitOnlyProjectScopedClusters, when an Application targets a shared cluster, then it is refused naming the rule', async () => {
    const refused = await http(
      'POST',
      '/api/v1/applications',
      admin,
      app('x', 'scoped-only', { name: 'prod', namespace: 'x' }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.details[0].description).toContain(
      'permitOnlyProjectScopedClusters is set and the cluster is not project-scoped',
    );
    expect(
      (await http('GET', '/api/v1/projects/scoped-only', admin)).body.spec.permitOnlyProjectScopedClusters,
    ).toBe(true);
  });

  it('given an Application outside the control namespace, when written, then every project of its chain must list it in sourceNamespaces', async () => {
    const refused = await http(
      'POST',
      '/api/v1/applications',
      admin,
      app('ns', 'by-name', { name: 'prod', namespace: 'web' }, 'team-apps'),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.details).toContainEqual({
      field: 'metadata.namespace',
      description:
        'Applications in namespace "team-apps" are not permitted by project "by-name" (sourceNamespaces)',
    });
    const p = (await http('GET', '/api/v1/projects/by-name', admin)).body;
    p.spec.sourceNamespaces = ['team-*'];
    expect((await http('PUT', '/api/v1/projects/by-name', admin, { project: p })).status).toBe(200);
    const ok = await http(
      'POST',
      '/api/v1/applications',
      admin,
      app('ns', 'by-name', { name: 'prod', namespace: 'web' }, 'team-apps'),
    );
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });
});
