// The api against real PostgreSQL and NATS, over gRPC and HTTP: authentication (audited refusals and
// logins), RBAC with the deciding policy line, project rules (admin-only unbounded projects, field-path
// validation, write-time project checks), API tokens, and HTTP bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { apiv1, fieldViolationsOf } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from './test-support/harness.js';
import { grpcError, guestbook, httpClient, teamA, TENANT_POLICY } from './test-support/fixtures.js';

describe('api: authentication, RBAC and validation', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let admin: string;
  let tenant: string;
  let http: ReturnType<typeof httpClient>;

  beforeAll(async () => {
    h = await startHarness({ 'rbac.policy-csv': TENANT_POLICY });
    c = h.clients();
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
  });
  afterAll(async () => h?.stop());

  it('refuses a wrong password and a call without a token, auditing the refusal', async () => {
    expect((await grpcError(h.login('admin', 'wrong-password'))).code).toBe(status.UNAUTHENTICATED);
    const noToken = await grpcError(unary(c.projects.list.bind(c.projects), {}));
    expect(noToken.code).toBe(status.UNAUTHENTICATED);
    const res = await http('GET', '/api/v1/projects');
    expect(res.status).toBe(401);
    await h.api.services.authz.flush();
    const rows = await unary(
      c.audit.query.bind(c.audit),
      apiv1.AuditQuery.fromPartial({ table: 'access_decisions', user: 'anonymous', outcome: 'deny' }),
      { metadata: bearer(admin) },
    );
    expect(rows.rows.map((r) => r.fields?.resource)).toContain('api');
    expect(rows.rows.some((r) => r.fields?.via === 'http')).toBe(true);
    const logins = await unary(
      c.audit.query.bind(c.audit),
      apiv1.AuditQuery.fromPartial({ table: 'access_decisions', user: 'login:admin' }),
      { metadata: bearer(admin) },
    );
    expect(logins.rows.map((r) => `${r.fields?.decision} ${r.fields?.reason}`)).toEqual(
      expect.arrayContaining(['deny wrong password', 'allow password verified']),
    );
  });

  it('lets the admin create a project with destinationServiceAccounts and accounts with groups', async () => {
    const p = await unary(
      c.projects.create.bind(c.projects),
      { project: apiv1.Project.fromJSON(teamA), upsert: false },
      { metadata: bearer(admin) },
    );
    expect(p.spec?.destinationServiceAccounts[0]?.defaultServiceAccount).toBe('deployer');
    expect(p.metadata?.resourceVersion).toBe(1);
    await unary(
      c.projects.create.bind(c.projects),
      {
        project: apiv1.Project.fromJSON({ metadata: { name: 'team-b' }, spec: { sourceRepos: ['*'] } }),
        upsert: false,
      },
      { metadata: bearer(admin) },
    );
    const created = await http('POST', '/api/v1/account', admin, {
      name: 'alice',
      password: 'alice-password',
      groups: ['tenant-a'],
      capabilities: ['login', 'apiKey'],
    });
    expect(created.status).toBe(200);
    expect(created.body).not.toHaveProperty('passwordHash');
    await http('POST', '/api/v1/account', admin, { name: 'editor', password: 'editor-password' });
    tenant = (
      await http('POST', '/api/v1/session', undefined, { username: 'alice', password: 'alice-password' })
    ).body.token;
    expect(tenant).toBeTruthy();
  });

  it('refuses an invalid project with the field path of each problem', async () => {
    const bad = {
      metadata: { name: 'bad' },
      spec: {
        destinationServiceAccounts: [
          { server: '*', namespace: 'a', defaultServiceAccount: 'x' },
          { server: '*', namespace: '[oops', defaultServiceAccount: 'ns:sa' },
          { server: '*', namespace: 'b', defaultServiceAccount: 'bad*name' },
        ],
      },
    };
    const err = await grpcError(
      unary(
        c.projects.create.bind(c.projects),
        { project: apiv1.Project.fromJSON(bad), upsert: false },
        { metadata: bearer(admin) },
      ),
    );
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    const fields = fieldViolationsOf(err).map((v) => v.field);
    expect(fields).toContain('spec.destinationServiceAccounts[1].namespace');
    expect(fields).toContain('spec.destinationServiceAccounts[2].defaultServiceAccount');
    const viaHttp = await http('POST', '/api/v1/projects', admin, { project: bad });
    expect(viaHttp.status).toBe(400);
    expect(viaHttp.body.details.map((d: { field: string }) => d.field)).toContain(
      'spec.destinationServiceAccounts[1].namespace',
    );
    expect((await http('GET', '/api/v1/projects/bad', admin)).status).toBe(404);
  });

  it('lets only admins change a project no parentProject bounds; a parent must bound what it names', async () => {
    const editor = await h.login('editor', 'editor-password');
    const current = await unary(
      c.projects.get.bind(c.projects),
      { name: 'team-a' },
      { metadata: bearer(editor) },
    );
    const update = (project: typeof current, token: string) =>
      unary(c.projects.update.bind(c.projects), { project }, { metadata: bearer(token) });
    const widened = {
      ...current,
      spec: {
        ...current.spec!,
        destinationServiceAccounts: [
          { server: '*', namespace: '*', defaultServiceAccount: 'kube-system:admin' },
        ],
      },
    };
    const err = await grpcError(update(widened, editor));
    expect(err.code).toBe(status.PERMISSION_DENIED);
    expect(err.details).toBe(
      'only admins may change project team-a: it has no spec.parentProject, so nothing bounds it',
    );
    const described = { ...current, spec: { ...current.spec!, description: 'edited by editor' } };
    expect((await grpcError(update(described, editor))).code).toBe(status.PERMISSION_DENIED);
    // Under a parent it is bounded, but team-b allows none of team-a's destinations.
    const reparented = { ...current, spec: { ...current.spec!, parentProject: 'team-b' } };
    const wider = await grpcError(update(reparented, editor));
    expect(wider.code).toBe(status.INVALID_ARGUMENT);
    expect(fieldViolationsOf(wider).map((v) => v.field)).toContain('spec.destinations[0]');
    const updated = await update(
      { ...described, spec: { ...described.spec!, description: 'edited by admin' } },
      admin,
    );
    expect(updated.spec?.description).toBe('edited by admin');
    expect(updated.metadata?.resourceVersion).toBe(2);
    // A stale resourceVersion is refused rather than overwriting the newer project.
    const stale = await grpcError(
      update({ ...described, spec: { ...described.spec!, description: 'stale' } }, admin),
    );
    expect(stale.code).toBe(status.ABORTED);
  });

  it('lets a tenant create an application in its project and refuses one in another', async () => {
    const app = await unary(
      c.applications.create.bind(c.applications),
      { application: apiv1.Application.fromJSON(guestbook('team-a')), upsert: false },
      { metadata: bearer(tenant) },
    );
    expect(app.spec?.source?.repoUrl).toBe('https://git.example.com/team-a/apps.git');
    const outside = {
      ...guestbook('team-a', 'escape'),
      spec: {
        ...guestbook('team-a', 'escape').spec,
        destination: { server: 'https://kubernetes.default.svc', namespace: 'kube-system' },
      },
    };
    const refusedByProject = await http('POST', '/api/v1/applications', tenant, { application: outside });
    expect(refusedByProject.status).toBe(400);
    expect(refusedByProject.body.details[0].field).toBe('spec.destination');
    expect(refusedByProject.body.details[0].description).toMatch(/not permitted by project "team-a"/);
    const denied = await http('POST', '/api/v1/applications', tenant, {
      application: guestbook('team-b', 'intruder'),
    });
    expect(denied.status).toBe(403);
    const rows = await unary(
      c.audit.query.bind(c.audit),
      apiv1.AuditQuery.fromPartial({ table: 'access_decisions', user: 'alice', outcome: 'deny' }),
      { metadata: bearer(admin) },
    );
    expect(rows.rows[0]?.fields).toMatchObject({
      resource: 'applications',
      action: 'create',
      object: 'team-b/intruder',
      decision: 'deny',
    });
    const allowed = await unary(
      c.audit.query.bind(c.audit),
      apiv1.AuditQuery.fromPartial({ table: 'access_decisions', user: 'alice', outcome: 'allow' }),
      { metadata: bearer(admin) },
    );
    const create = allowed.rows.find((r) => r.fields?.action === 'create');
    expect(create?.fields?.policy_line).toBe(
      'project:team-a:1: p, proj:team-a:developer, applications, *, team-a/*, allow',
    );
    // The tenant cannot read the audit trail.
    expect((await http('GET', '/api/v1/audit/access_decisions', tenant)).status).toBe(403);
  });

  it('issues, lists and revokes API tokens', async () => {
    const created = await http('POST', '/api/v1/account/alice/token', tenant, { id: 'ci' });
    expect(created.status).toBe(200);
    const apiToken = created.body.token as string;
    expect((await http('GET', '/api/v1/session/userinfo', apiToken)).body).toMatchObject({
      username: 'alice',
      groups: ['tenant-a'],
    });
    expect(
      (await http('GET', '/api/v1/account/alice/token', tenant)).body.items.map((t: { id: string }) => t.id),
    ).toEqual(['ci']);
    expect((await http('DELETE', '/api/v1/account/alice/token/ci', tenant)).status).toBe(200);
    expect((await http('GET', '/api/v1/session/userinfo', apiToken)).status).toBe(401);
  });

  it('refuses a parentProject that does not exist or that makes a cycle, naming the field', async () => {
    const orphan = await grpcError(
      unary(
        c.projects.create.bind(c.projects),
        {
          project: apiv1.Project.fromJSON({
            metadata: { name: 'orphan' },
            spec: { sourceRepos: ['*'], parentProject: 'nowhere' },
          }),
          upsert: false,
        },
        { metadata: bearer(admin) },
      ),
    );
    expect(orphan.code).toBe(status.INVALID_ARGUMENT);
    expect(fieldViolationsOf(orphan)).toEqual([
      { field: 'spec.parentProject', description: 'project nowhere does not exist' },
    ]);
    await unary(
      c.projects.create.bind(c.projects),
      {
        project: apiv1.Project.fromJSON({
          metadata: { name: 'team-b-child' },
          spec: { sourceRepos: ['*'], parentProject: 'team-b' },
        }),
        upsert: false,
      },
      { metadata: bearer(admin) },
    );
    const getTeamB = () =>
      unary(c.projects.get.bind(c.projects), { name: 'team-b' }, { metadata: bearer(admin) });
    const teamB = await getTeamB();
    const underChild = { ...teamB, spec: { ...teamB.spec!, parentProject: 'team-b-child' } };
    const cycle = await grpcError(
      unary(c.projects.update.bind(c.projects), { project: underChild }, { metadata: bearer(admin) }),
    );
    expect(cycle.code).toBe(status.INVALID_ARGUMENT);
    expect(fieldViolationsOf(cycle)).toEqual([
      { field: 'spec.parentProject', description: 'makes a cycle through team-b' },
    ]);
    expect((await http('GET', '/api/v1/projects/orphan', admin)).status).toBe(404);
    const unchanged = await getTeamB();
    expect(unchanged.spec?.parentProject).toBe('');
    expect(unchanged.metadata?.resourceVersion).toBe(teamB.metadata?.resourceVersion);
  });

  it("keeps Argo CD's ignoreDifferences, retry, allowEmpty and managedNamespaceMetadata over gRPC and HTTP", async () => {
    const manifest = guestbook('team-a', 'tuned');
    const spec = {
      ...manifest.spec,
      ignoreDifferences: [
        {
          group: 'apps',
          kind: 'Deployment',
          jsonPointers: ['/spec/replicas'],
          managedFieldsManagers: ['hpa'],
        },
      ],
      syncPolicy: {
        automated: { prune: true, selfHeal: true, allowEmpty: true },
        syncOptions: ['CreateNamespace=true'],
        managedNamespaceMetadata: { labels: { team: 'a' } },
        retry: { limit: 3, backoff: { duration: '5s', factor: 2, maxDuration: '1m' } },
      },
    };
    const created = await unary(
      c.applications.create.bind(c.applications),
      { application: apiv1.Application.fromJSON({ ...manifest, spec }), upsert: false },
      { metadata: bearer(admin) },
    );
    const json = apiv1.Application.toJSON(created) as { spec: Record<string, unknown> };
    expect(json.spec.ignoreDifferences).toEqual(spec.ignoreDifferences);
    expect(json.spec.syncPolicy).toEqual(spec.syncPolicy);
    const read = await http('GET', '/api/v1/applications/tuned', admin);
    expect(read.body.spec.syncPolicy.retry).toEqual(spec.syncPolicy.retry);
    const bad = await http('POST', '/api/v1/applications', admin, {
      application: {
        ...manifest,
        metadata: { ...manifest.metadata, name: 'bad' },
        spec: { ...spec, ignoreDifferences: [{ jsonPointers: ['x'] }] },
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { field: string }) => d.field)).toEqual(
      expect.arrayContaining(['spec.ignoreDifferences[0].kind', 'spec.ignoreDifferences[0].jsonPointers[0]']),
    );
    // Out of the way of the listing below.
    expect((await http('DELETE', '/api/v1/applications/tuned?cascade=false', admin)).status).toBe(200);
  });

  it('refuses unknown fields, bad types and oversized bodies over HTTP, writing nothing', async () => {
    const unknown = await http('POST', '/api/v1/applications', admin, {
      application: guestbook('team-a', 'x'),
      upsart: true,
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toContainEqual({ field: 'upsart', description: 'unknown field' });
    const badType = await http('POST', '/api/v1/applications', admin, {
      application: {
        ...guestbook('team-a', 'y'),
        spec: { ...guestbook('team-a', 'y').spec, destination: { server: 1 } },
      },
    });
    expect(badType.status).toBe(400);
    expect(badType.body.details[0].field).toBe('spec.destination.server');
    const huge = await http('POST', '/api/v1/apply', admin, { manifests: 'x'.repeat(300 * 1024) });
    expect(huge.status).toBe(413);
    const list = await http('GET', '/api/v1/applications', admin);
    expect(list.body.items.map((a: { metadata: { name: string } }) => a.metadata.name)).toEqual([
      'guestbook',
    ]);
    const doc = await http('GET', '/api/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
    expect(doc.body.paths['/api/v1/applications/{name}/sync'].post.operationId).toBe(
      'ApplicationService.Sync',
    );
    expect(
      doc.body.paths['/api/v1/applications'].post.requestBody.content['application/json'].schema
        .additionalProperties,
    ).toBe(false);
  });
});
