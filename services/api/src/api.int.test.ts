// The api against real PostgreSQL and NATS, over gRPC and HTTP: authentication, RBAC with audit,
// project rules (admin-only fields, field-path validation), sealed cluster credentials, sync
// requests on the bus, API tokens, and HTTP bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status, type ServiceError } from '@grpc/grpc-js';
import { connect, AckPolicy, type NatsConnection } from 'nats';
import { connectBus, newEvent, syncResourceSynced, syncStarted, syncSucceeded } from '@capstan/events';
import { apiv1, fieldViolationsOf } from '@capstan/proto';
import { rebuildProjections } from './projections/rebuild.js';
import {
  ADMIN_PASSWORD,
  APPSET_TOKEN,
  SYNC_TOKEN,
  bearer,
  startHarness,
  unary,
  type Harness,
} from './test-support/harness.js';

const TENANT_POLICY = `
p, role:project-editor, projects, update, *, allow
p, role:project-editor, projects, get, *, allow
g, editor, role:project-editor
`;

const teamA = {
  metadata: { name: 'team-a' },
  spec: {
    description: 'team a',
    sourceRepos: ['https://git.example.com/team-a/*'],
    destinations: [{ server: 'https://kubernetes.default.svc', namespace: 'team-a-*' }],
    destinationServiceAccounts: [
      {
        server: 'https://kubernetes.default.svc',
        namespace: 'team-a-prod',
        defaultServiceAccount: 'deployer',
      },
    ],
    roles: [
      {
        name: 'developer',
        policies: ['p, proj:team-a:developer, applications, *, team-a/*, allow'],
        groups: ['tenant-a'],
      },
    ],
  },
};

const guestbook = (project: string, name = 'guestbook') => ({
  metadata: { name },
  spec: {
    project,
    source: { repoURL: 'https://git.example.com/team-a/apps.git', path: 'guestbook', targetRevision: 'HEAD' },
    destination: { server: 'https://kubernetes.default.svc', namespace: 'team-a-prod' },
  },
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- HTTP response bodies of many shapes
type JsonBody = any;

async function grpcError(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error('expected the call to fail');
}

describe('api', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let admin: string;
  let tenant: string;

  async function http(
    method: string,
    path: string,
    token?: string,
    body?: unknown,
  ): Promise<{ status: number; body: JsonBody }> {
    const res = await fetch(`${h.httpUrl}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  }

  beforeAll(async () => {
    h = await startHarness({ policyCsv: TENANT_POLICY });
    c = h.clients();
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

  it('lets only admins change destinationServiceAccounts or parentProject', async () => {
    const editor = await h.login('editor', 'editor-password');
    const current = await unary(
      c.projects.get.bind(c.projects),
      { name: 'team-a' },
      { metadata: bearer(editor) },
    );
    const widened = {
      ...current,
      spec: {
        ...current.spec!,
        destinationServiceAccounts: [
          { server: '*', namespace: '*', defaultServiceAccount: 'kube-system:admin' },
        ],
      },
    };
    const err = await grpcError(
      unary(c.projects.update.bind(c.projects), { project: widened }, { metadata: bearer(editor) }),
    );
    expect(err.code).toBe(status.PERMISSION_DENIED);
    expect(err.details).toMatch(/only admins may change spec.destinationServiceAccounts/);
    const reparented = { ...current, spec: { ...current.spec!, parentProject: 'team-b' } };
    expect(
      (
        await grpcError(
          unary(c.projects.update.bind(c.projects), { project: reparented }, { metadata: bearer(editor) }),
        )
      ).code,
    ).toBe(status.PERMISSION_DENIED);
    const described = { ...current, spec: { ...current.spec!, description: 'edited by editor' } };
    const updated = await unary(
      c.projects.update.bind(c.projects),
      { project: described },
      { metadata: bearer(editor) },
    );
    expect(updated.spec?.description).toBe('edited by editor');
    expect(updated.metadata?.resourceVersion).toBe(2);
    // A stale resourceVersion is refused rather than overwriting the newer project.
    const stale = await grpcError(
      unary(
        c.projects.update.bind(c.projects),
        { project: { ...described, spec: { ...described.spec!, description: 'stale' } } },
        { metadata: bearer(editor) },
      ),
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

  it('publishes a sync request on the bus through the outbox', async () => {
    const nc: NatsConnection = await connect({ servers: h.bus.url });
    try {
      const res = await unary(
        c.applications.sync.bind(c.applications),
        { name: 'guestbook', appNamespace: '', revision: '', dryRun: true, prune: false },
        { metadata: bearer(tenant) },
      );
      expect(res.operationId).toBeTruthy();
      await h.api.flushOutbox();
      const jsm = await nc.jetstreamManager();
      const stream = await jsm.streams.find(`${h.bus.namespace}.cmd.sync.request`);
      const consumer = await jsm.consumers.add(stream, {
        ack_policy: AckPolicy.None,
        filter_subject: `${h.bus.namespace}.cmd.sync.request`,
      });
      const msg = await (await nc.jetstream().consumers.get(stream, consumer.name)).next({ expires: 5000 });
      const event = msg?.json<{
        type: string;
        actor: string;
        data: { operationId: string; dryRun: boolean; application: { name: string } };
      }>();
      expect(event).toMatchObject({
        type: 'io.capstan.cmd.sync.request.v1',
        actor: 'user:alice',
        data: { operationId: res.operationId, dryRun: true, application: { name: 'guestbook' } },
      });
      const history = await unary(
        c.applications.history.bind(c.applications),
        { name: 'guestbook', appNamespace: '', project: '' },
        { metadata: bearer(tenant) },
      );
      expect(history.items[0]).toMatchObject({
        id: res.operationId,
        phase: 'Pending',
        initiatedBy: 'user:alice',
      });

      // The sync service reports back; the api follows the operation through its events.
      const bus = await connectBus({ url: h.bus.url, service: 'sync', namespace: h.bus.namespace });
      try {
        const application = { name: 'guestbook', namespace: 'argocd' };
        const identity = { impersonation: true, username: 'system:serviceaccount:team-a-prod:deployer' };
        const meta = {
          subject: 'applications/argocd/guestbook',
          actor: 'service:sync',
          source: 'capstan/sync',
        };
        const events = [
          newEvent(
            syncStarted.type,
            { operationId: res.operationId, application, dryRun: true, attempt: 1 },
            meta,
          ),
          newEvent(
            syncResourceSynced.type,
            {
              operationId: res.operationId,
              application,
              verb: 'apply',
              group: 'apps',
              kind: 'Deployment',
              namespace: 'team-a-prod',
              name: 'guestbook-ui',
              status: 'DryRun',
              httpStatus: 200,
              message: 'would configure',
              identity,
            },
            meta,
          ),
          newEvent(
            syncSucceeded.type,
            {
              operationId: res.operationId,
              application,
              revision: 'abc123',
              dryRun: true,
              identity,
              resources: 1,
              pruned: 0,
            },
            meta,
          ),
        ];
        for (const e of events) await bus.publish(e);
        await bus.publish(events[1]!); // redelivered: applied once
        let op: apiv1.SyncOperation | undefined;
        for (let i = 0; i < 100 && op?.phase !== 'Succeeded'; i++) {
          await new Promise((r) => setTimeout(r, 100));
          op = await unary(
            c.applications.getOperation.bind(c.applications),
            { name: 'guestbook', appNamespace: '', id: res.operationId },
            { metadata: bearer(tenant) },
          );
        }
        expect(op).toMatchObject({
          phase: 'Succeeded',
          identity: identity.username,
          impersonated: true,
          revision: 'abc123',
        });
        expect(op?.resources).toHaveLength(1);
        expect(op?.resources[0]).toMatchObject({
          kind: 'Deployment',
          name: 'guestbook-ui',
          identity: identity.username,
        });
      } finally {
        await bus.close();
      }
    } finally {
      await nc.close();
    }
  });

  it('stores cluster credentials sealed and hands them only to the sync service', async () => {
    const token = 'canary-bearer-token-0123456789';
    const cluster = await unary(
      c.clusters.create.bind(c.clusters),
      apiv1.ClusterCreateRequest.fromPartial({
        server: 'https://10.0.0.1:6443',
        name: 'prod',
        config: { bearerToken: token },
      }),
      { metadata: bearer(admin) },
    );
    expect(cluster.credentialType).toBe('bearer');
    expect(JSON.stringify(cluster)).not.toContain(token);
    const raw = await h.api.services.db
      .withSchema('api')
      .selectFrom('cluster_credentials')
      .selectAll()
      .execute();
    expect(raw[0]?.ciphertext.toString('utf8')).not.toContain(token);
    const events = await h.api.services.db
      .withSchema('api')
      .selectFrom('events')
      .select('envelope')
      .execute();
    expect(JSON.stringify(events)).not.toContain(token);
    const viaSync = await unary(
      c.credentials.get.bind(c.credentials),
      { server: '', name: 'prod' },
      { metadata: bearer(SYNC_TOKEN) },
    );
    expect(viaSync.config?.bearerToken).toBe(token);
    const viaHttp = await http(
      'GET',
      `/api/v1/clusters/${encodeURIComponent('https://10.0.0.1:6443')}`,
      admin,
    );
    expect(viaHttp.body).toMatchObject({ name: 'prod', credentialType: 'bearer' });
    expect(JSON.stringify(viaHttp.body)).not.toContain(token);
    expect((await http('GET', '/api/v1/clusters/prod', admin)).body.server).toBe('https://10.0.0.1:6443');
    expect(
      (
        await grpcError(
          unary(
            c.credentials.get.bind(c.credentials),
            { server: 'https://10.0.0.1:6443', name: '' },
            { metadata: bearer(admin) },
          ),
        )
      ).code,
    ).toBe(status.PERMISSION_DENIED);
    expect(
      (
        await grpcError(
          unary(
            c.credentials.get.bind(c.credentials),
            { server: 'https://10.0.0.1:6443', name: '' },
            { metadata: bearer(APPSET_TOKEN) },
          ),
        )
      ).code,
    ).toBe(status.PERMISSION_DENIED);
    expect(
      (
        await grpcError(
          unary(
            c.credentials.get.bind(c.credentials),
            { server: 'https://10.0.0.1:6443', name: '' },
            { metadata: bearer('not-a-real-service-token-000000000000') },
          ),
        )
      ).code,
    ).toBe(status.UNAUTHENTICATED);
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

  it('applies Argo CD manifests all-or-nothing and verifies the audit chain', async () => {
    const manifests = `
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: { name: team-c, namespace: argocd }
spec:
  sourceRepos: ['*']
  destinations: [{ server: 'https://kubernetes.default.svc', namespace: team-c }]
  syncWindows: [{ kind: allow, schedule: '0 22 * * *', duration: 1h, applications: ['*'] }]
  destinationServiceAccounts:
    - { server: '*', namespace: '*', defaultServiceAccount: 'team-c:deployer' }
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: web, namespace: argocd }
spec:
  project: team-c
  source: { repoURL: 'https://git.example.com/c.git', path: web }
  destination: { server: 'https://kubernetes.default.svc', namespace: team-c }
`;
    const bad = manifests.replace(
      "namespace: '*', defaultServiceAccount",
      "namespace: '{a', defaultServiceAccount",
    );
    const refused = await grpcError(
      unary(
        c.apply.apply.bind(c.apply),
        { manifests: bad, dryRun: false, strict: true },
        { metadata: bearer(admin) },
      ),
    );
    expect(refused.code).toBe(status.INVALID_ARGUMENT);
    expect(fieldViolationsOf(refused)[0]?.field).toBe(
      'document 1 (AppProject team-c): spec.destinationServiceAccounts[0].namespace',
    );
    expect((await http('GET', '/api/v1/applications/web', admin)).status).toBe(404);
    const applied = await unary(
      c.apply.apply.bind(c.apply),
      { manifests, dryRun: false, strict: true },
      { metadata: bearer(admin) },
    );
    expect(applied.results.map((r) => `${r.kind}/${r.name}:${r.action}`)).toEqual([
      'AppProject/team-c:created',
      'Application/web:created',
    ]);
    const again = await unary(
      c.apply.apply.bind(c.apply),
      { manifests, dryRun: false, strict: true },
      { metadata: bearer(admin) },
    );
    expect(again.results.map((r) => r.action)).toEqual(['unchanged', 'unchanged']);
    const verified = await unary(c.audit.verify.bind(c.audit), { table: '' }, { metadata: bearer(admin) });
    expect(verified.tables.every((t) => t.ok)).toBe(true);
  });

  it('keeps the fields gRPC messages cannot carry through a get-modify-update over gRPC', async () => {
    const p = await unary(c.projects.get.bind(c.projects), { name: 'team-c' }, { metadata: bearer(admin) });
    await unary(
      c.projects.update.bind(c.projects),
      { project: { ...p, spec: { ...p.spec!, description: 'via grpc' } } },
      { metadata: bearer(admin) },
    );
    const stored = (await http('GET', '/api/v1/projects/team-c', admin)).body;
    expect(stored.spec.description).toBe('via grpc');
    expect(stored.spec.syncWindows).toEqual([
      { kind: 'allow', schedule: '0 22 * * *', duration: '1h', applications: ['*'] },
    ]);
  });

  it('rebuilds the projections from the event store', async () => {
    const db = h.api.services.db;
    const snapshot = async () => ({
      projects: await db
        .withSchema('api')
        .selectFrom('projects')
        .select(['name', 'manifest', 'version', 'uid', 'created_at'])
        .orderBy('name')
        .execute(),
      applications: await db
        .withSchema('api')
        .selectFrom('applications')
        .select(['namespace', 'name', 'manifest', 'version', 'sync_status'])
        .orderBy('name')
        .execute(),
      clusters: await db
        .withSchema('api')
        .selectFrom('clusters')
        .select(['server', 'name', 'version', 'credential_type'])
        .execute(),
    });
    const before = await snapshot();
    await db.withSchema('api').deleteFrom('projects').execute();
    await db
      .withSchema('api')
      .updateTable('applications')
      .set({ manifest: JSON.stringify({ broken: true }) })
      .execute();
    const result = await rebuildProjections(db);
    expect(result).toEqual({
      projects: before.projects.length,
      applications: before.applications.length,
      clusters: before.clusters.length,
    });
    expect(await snapshot()).toEqual(before);
  });
});
