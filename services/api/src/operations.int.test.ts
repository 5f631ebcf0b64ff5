// The api's operations against real PostgreSQL and NATS: sync requests through the outbox and the
// sync service's events coming back, sealed cluster credentials for the sync service only, the
// declarative apply, fields gRPC cannot carry, and projections rebuilt from the event store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { AckPolicy, type NatsConnection } from 'nats';
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
import { grpcError, guestbook, httpClient, teamA } from './test-support/fixtures.js';

describe('api: sync, clusters, apply and projections', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let admin: string;
  let tenant: string;
  let http: ReturnType<typeof httpClient>;

  beforeAll(async () => {
    h = await startHarness();
    c = h.clients();
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
    await unary(
      c.projects.create.bind(c.projects),
      { project: apiv1.Project.fromJSON(teamA), upsert: false },
      { metadata: bearer(admin) },
    );
    expect(
      (
        await http('POST', '/api/v1/account', admin, {
          name: 'alice',
          password: 'alice-password',
          groups: ['tenant-a'],
        })
      ).status,
    ).toBe(200);
    tenant = await h.login('alice', 'alice-password');
    await unary(
      c.applications.create.bind(c.applications),
      { application: apiv1.Application.fromJSON(guestbook('team-a')), upsert: false },
      { metadata: bearer(tenant) },
    );
  });
  afterAll(async () => h?.stop());

  it('publishes a sync request on the bus through the outbox', async () => {
    // An operator's look at the command stream (no service may read another's consumer).
    const nc: NatsConnection = await h.bus.connect('admin');
    try {
      const res = await unary(
        c.applications.sync.bind(c.applications),
        {
          name: 'guestbook',
          appNamespace: '',
          revision: '',
          dryRun: true,
          prune: false,
          resources: [],
          revisions: [],
          sourcePositions: [],
        },
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
        data: {
          operationId: res.operationId,
          dryRun: true,
          application: { name: 'guestbook' },
          trigger: { kind: 'user', actor: 'user:alice' },
        },
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
      const bus = await connectBus({ ...h.bus.connection('sync'), service: 'sync' });
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
              attempt: 1,
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
          attempt: 1,
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
    const syncClients = h.serviceClients('sync');
    const viaSync = await unary(
      syncClients.credentials.get.bind(syncClients.credentials),
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
            h.serviceClients('appset').credentials.get.bind(h.serviceClients('appset').credentials),
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

  it('answers every audit filter on every table (valid SQL, newest first, paged)', async () => {
    for (const table of ['sync_decisions', 'resource_results', 'credential_decisions', 'access_decisions']) {
      for (const outcome of table === 'resource_results' ? ['', 'ok', 'error'] : ['', 'allow', 'deny']) {
        const q = apiv1.AuditQuery.fromPartial({
          table,
          application: 'guestbook',
          project: 'team-a',
          user: 'alice',
          since: '2020-01-01T00:00:00Z',
          until: '2100-01-01T00:00:00Z',
          outcome,
          limit: 5,
        });
        await expect(
          unary(c.audit.query.bind(c.audit), q, { metadata: bearer(admin) }),
          `${table} ${outcome}`,
        ).resolves.toBeDefined();
      }
    }
    await h.api.services.authz.flush();
    const first = await unary(
      c.audit.query.bind(c.audit),
      apiv1.AuditQuery.fromPartial({ table: 'access_decisions', limit: 2 }),
      { metadata: bearer(admin) },
    );
    expect(first.rows).toHaveLength(2);
    expect(first.rows[0]!.id).toBeGreaterThan(first.rows[1]!.id);
    const next = await unary(
      c.audit.query.bind(c.audit),
      apiv1.AuditQuery.fromPartial({ table: 'access_decisions', limit: 2, pageToken: first.nextPageToken }),
      { metadata: bearer(admin) },
    );
    expect(next.rows[0]!.id).toBeLessThan(first.rows[1]!.id);
    const bad = await grpcError(
      unary(c.audit.query.bind(c.audit), apiv1.AuditQuery.fromPartial({ table: 'nope' }), {
        metadata: bearer(admin),
      }),
    );
    expect(fieldViolationsOf(bad)[0]?.field).toBe('table');
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
