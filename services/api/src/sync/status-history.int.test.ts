// The api's side of live status, history and rollback against real PostgreSQL and NATS: the
// reconciler's verdicts (io.capstan.sync.status-changed.v1, published here as the sync service)
// become Argo CD's status; operations the sync service starts itself appear in the history with
// their trigger; rollback is a sync to a history entry's revision, refused as Argo refuses it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { status as grpcStatus } from '@grpc/grpc-js';
import { sql } from 'kysely';
import { AckPolicy, DeliverPolicy } from 'nats';
import {
  connectBus,
  newEvent,
  syncFailed,
  syncStarted,
  syncStatusChanged,
  syncSucceeded,
  type Bus,
  type EventOf,
} from '@capstan/events';
import { apiv1 } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError, guestbook, httpClient, teamA } from '../test-support/fixtures.js';
import { applyReconciledStatus } from './reconciled-status.consumer.js';

const application = { name: 'guestbook', namespace: 'argocd' };
const meta = { subject: 'applications/argocd/guestbook', actor: 'service:sync', source: 'capstan/sync' };
const identity = { impersonation: true, username: 'system:serviceaccount:team-a-prod:deployer' };

async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not met in time: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

type StatusData = EventOf<typeof syncStatusChanged>['data'];

const verdict = (at: string, over: Partial<StatusData> = {}): StatusData => ({
  application,
  sync: { status: 'OutOfSync', revision: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678' },
  health: { status: 'Progressing', message: 'Waiting for rollout to finish' },
  resources: [
    {
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      namespace: 'team-a-prod',
      name: 'guestbook-ui',
      status: 'OutOfSync',
      health: { status: 'Progressing', message: 'Waiting for rollout to finish' },
    },
    {
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      namespace: 'team-a-prod',
      name: 'old',
      status: 'OutOfSync',
      requiresPruning: true,
    },
  ],
  reconciledAt: at,
  ...over,
});

describe('api: live status, history and rollback', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let admin: string;
  let bob: string;
  let sync: Bus;

  const get = (token = admin) =>
    unary(
      c.applications.get.bind(c.applications),
      { name: 'guestbook', appNamespace: '', project: '' },
      { metadata: bearer(token) },
    );
  const operations = () =>
    unary(
      c.applications.history.bind(c.applications),
      { name: 'guestbook', appNamespace: '', project: '' },
      { metadata: bearer(admin) },
    );
  /** The sync service runs operation `id` to its end (started, then succeeded or failed). */
  const runOperation = async (
    id: string,
    o: {
      revision: string;
      outcome: 'succeeded' | 'failed';
      dryRun?: boolean;
      trigger?: { kind: 'automated' | 'self-heal' | 'retry'; actor: string };
    },
  ) => {
    await sync.publish(
      newEvent(
        syncStarted.type,
        {
          operationId: id,
          application,
          dryRun: o.dryRun ?? false,
          attempt: 1,
          ...(o.trigger ? { trigger: o.trigger } : {}),
        },
        meta,
      ),
    );
    await sync.publish(
      o.outcome === 'succeeded'
        ? newEvent(
            syncSucceeded.type,
            {
              operationId: id,
              application,
              revision: o.revision,
              dryRun: o.dryRun ?? false,
              identity,
              resources: 1,
              pruned: 0,
            },
            meta,
          )
        : newEvent(
            syncFailed.type,
            {
              operationId: id,
              application,
              phase: 'apply',
              reason: 'one or more objects failed to apply',
              identity,
            },
            meta,
          ),
    );
    await eventually(
      () =>
        unary(
          c.applications.getOperation.bind(c.applications),
          { name: 'guestbook', appNamespace: '', id },
          { metadata: bearer(admin) },
        ).catch(() => undefined),
      (op) => op !== undefined && op.finishedAt !== '',
    );
  };

  beforeAll(async () => {
    h = await startHarness({ 'rbac.policy-csv': 'p, bob, applications, get, team-a/*, allow' });
    c = h.clients();
    admin = await h.login('admin', ADMIN_PASSWORD);
    await unary(
      c.projects.create.bind(c.projects),
      { project: apiv1.Project.fromJSON(teamA), upsert: false },
      { metadata: bearer(admin) },
    );
    expect(
      (await httpClient(h)('POST', '/api/v1/account', admin, { name: 'bob', password: 'bob-password-0' }))
        .status,
    ).toBe(200);
    bob = await h.login('bob', 'bob-password-0');
    await unary(
      c.applications.create.bind(c.applications),
      { application: apiv1.Application.fromJSON(guestbook('team-a')), upsert: false },
      { metadata: bearer(admin) },
    );
    sync = await connectBus({ ...h.bus.connection('sync'), service: 'sync' });
  });
  afterAll(async () => {
    await sync?.close();
    await h?.stop();
  });

  it('shows Unknown until the reconciler has said anything (as Argo CD before its first comparison)', async () => {
    const a = await get();
    expect(a.status?.sync).toMatchObject({ status: 'Unknown', revision: '' });
    expect(a.status?.sync?.comparedTo).toBeUndefined();
    expect(a.status?.health).toMatchObject({ status: 'Unknown' });
    expect(a.status?.reconciledAt).toBe('');
    expect(a.status?.resources).toEqual([]);
  });

  it("shows the reconciler's verdict, ignores an older one, and a redelivered one changes nothing", async () => {
    const first = newEvent(syncStatusChanged.type, verdict('2026-11-25T10:00:00.000Z'), meta);
    await sync.publish(first);
    const a = await eventually(get, (x) => x.status?.reconciledAt === '2026-11-25T10:00:00.000Z');
    expect(a.status?.sync).toMatchObject({
      status: 'OutOfSync',
      revision: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
      comparedTo: {
        source: { path: 'guestbook', targetRevision: 'HEAD' },
        destination: { namespace: 'team-a-prod' },
      },
    });
    expect(a.status?.health).toEqual({ status: 'Progressing', message: 'Waiting for rollout to finish' });
    expect(a.status?.resources).toEqual([
      expect.objectContaining({
        kind: 'Deployment',
        name: 'guestbook-ui',
        status: 'OutOfSync',
        health: { status: 'Progressing', message: 'Waiting for rollout to finish' },
      }),
      expect.objectContaining({ kind: 'ConfigMap', name: 'old', status: 'OutOfSync', requiresPruning: true }),
    ]);
    // Over HTTP, in Argo CD's JSON shape.
    const http = await httpClient(h)('GET', '/api/v1/applications/guestbook', admin);
    expect(http.body.status).toMatchObject({
      sync: { status: 'OutOfSync' },
      health: { status: 'Progressing' },
      resources: [{ kind: 'Deployment' }, { kind: 'ConfigMap', requiresPruning: true }],
    });

    const newer = newEvent(
      syncStatusChanged.type,
      verdict('2026-11-25T10:05:00.000Z', {
        sync: { status: 'Synced', revision: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678' },
        health: { status: 'Healthy' },
        resources: [
          {
            group: 'apps',
            version: 'v1',
            kind: 'Deployment',
            namespace: 'team-a-prod',
            name: 'guestbook-ui',
            status: 'Synced',
            health: { status: 'Healthy' },
          },
        ],
        previous: { sync: 'OutOfSync', health: 'Progressing' },
      }),
      meta,
    );
    const older = newEvent(
      syncStatusChanged.type,
      verdict('2026-11-25T09:59:00.000Z', { health: { status: 'Degraded', message: 'late' } }),
      meta,
    );
    await sync.publish(newer);
    await sync.publish(older);
    // The older verdict, published last, is applied (recorded as processed) and changes nothing.
    await eventually(
      () =>
        sql<{
          n: number;
        }>`select count(*)::int as n from api.processed_events where event_id = ${older.id}`.execute(
          h.api.services.db,
        ),
      (r) => r.rows[0]?.n === 1,
    );
    const b = await get();
    expect(b.status?.reconciledAt).toBe('2026-11-25T10:05:00.000Z');
    expect(b.status?.sync?.status).toBe('Synced');
    expect(b.status?.health).toEqual({ status: 'Healthy', message: '' });
    expect(b.status?.resources.map((r) => r.name)).toEqual(['guestbook-ui']);

    // A redelivery of the first verdict (the consumer sees it again) is applied once: nothing changes.
    await applyReconciledStatus(h.api.services.db, first);
    await applyReconciledStatus(h.api.services.db, newer);
    expect((await get()).status).toEqual(b.status);
  });

  it("shows a comparison that failed as Unknown with Argo CD's ComparisonError condition, gone once it compares again", async () => {
    await sync.publish(
      newEvent(
        syncStatusChanged.type,
        verdict('2026-11-25T10:10:00.000Z', {
          sync: { status: 'Unknown' },
          health: { status: 'Unknown' },
          resources: [],
          message:
            'deployments.apps is forbidden: User "system:serviceaccount:team-a-prod:deployer" cannot list resource "deployments"',
        }),
        meta,
      ),
    );
    const a = await eventually(get, (x) => x.status?.reconciledAt === '2026-11-25T10:10:00.000Z');
    expect(a.status?.sync).toMatchObject({ status: 'Unknown', revision: '' });
    expect(a.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'ComparisonError',
        message: expect.stringContaining('cannot list resource "deployments"'),
      }),
    ]);
    await sync.publish(newEvent(syncStatusChanged.type, verdict('2026-11-25T10:11:00.000Z'), meta));
    const b = await eventually(get, (x) => x.status?.reconciledAt === '2026-11-25T10:11:00.000Z');
    expect(b.status?.conditions).toEqual([]);
  });

  it("shows each declared object argocd-cm excludes as Argo CD's ExcludedResourceWarning, gone once it is no longer excluded", async () => {
    await sync.publish(
      newEvent(
        syncStatusChanged.type,
        verdict('2026-11-25T10:20:00.000Z', {
          excluded: [
            'Resource apps/Deployment guestbook-ui is excluded in the settings',
            'Resource /Service guestbook-ui is excluded in the settings',
          ],
        }),
        meta,
      ),
    );
    const a = await eventually(get, (x) => x.status?.reconciledAt === '2026-11-25T10:20:00.000Z');
    expect(a.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'ExcludedResourceWarning',
        message: 'Resource apps/Deployment guestbook-ui is excluded in the settings',
      }),
      expect.objectContaining({
        type: 'ExcludedResourceWarning',
        message: 'Resource /Service guestbook-ui is excluded in the settings',
      }),
    ]);
    await sync.publish(newEvent(syncStatusChanged.type, verdict('2026-11-25T10:21:00.000Z'), meta));
    const b = await eventually(get, (x) => x.status?.reconciledAt === '2026-11-25T10:21:00.000Z');
    expect(b.status?.conditions).toEqual([]);
  });

  it('records operations the sync service started itself, with their trigger, and keeps successful deployments in status.history', async () => {
    const auto = `auto-${randomUUID()}`;
    await runOperation(auto, {
      revision: 'rev-0000001',
      outcome: 'succeeded',
      trigger: { kind: 'automated', actor: 'automation' },
    });
    const healed = `heal-${randomUUID()}`;
    await runOperation(healed, {
      revision: 'rev-0000001',
      outcome: 'failed',
      trigger: { kind: 'self-heal', actor: 'automation' },
    });

    // A user's sync through the api: its trigger is the default, user.
    const requested = await unary(
      c.applications.sync.bind(c.applications),
      {
        name: 'guestbook',
        appNamespace: '',
        revision: '',
        dryRun: false,
        prune: false,
        resources: [],
        revisions: [],
        sourcePositions: [],
      },
      { metadata: bearer(admin) },
    );
    await runOperation(requested.operationId, { revision: 'rev-0000002', outcome: 'succeeded' });
    const dry = await unary(
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
      { metadata: bearer(admin) },
    );
    await runOperation(dry.operationId, { revision: 'rev-0000002', outcome: 'succeeded', dryRun: true });

    const ops = (await operations()).items;
    expect(ops.map((o) => [o.id, o.trigger, o.phase, o.dryRun])).toEqual([
      [dry.operationId, 'user', 'Succeeded', true],
      [requested.operationId, 'user', 'Succeeded', false],
      [healed, 'self-heal', 'Failed', false],
      [auto, 'automated', 'Succeeded', false],
    ]);
    expect(ops.find((o) => o.id === auto)).toMatchObject({ initiatedBy: 'automation', project: 'team-a' });

    const a = await get();
    // Argo CD: only successful, non-dry-run syncs; ids 0, 1, ... oldest first.
    expect(a.status?.history.map((e) => [e.id, e.revision, e.trigger, e.initiatedBy])).toEqual([
      [0, 'rev-0000001', 'automated', { username: '', automated: true }],
      [1, 'rev-0000002', 'user', { username: 'admin', automated: false }],
    ]);
    expect(a.status?.history[0]?.source).toMatchObject({ path: 'guestbook', targetRevision: 'HEAD' });
    expect(a.status?.history[1]?.deployedAt).not.toBe('');
    // The last operation is the dry run; a sync's outcome does not touch the live status.
    expect(a.status?.operationState).toMatchObject({
      id: dry.operationId,
      phase: 'Succeeded',
      operation: { sync: { dryRun: true }, initiatedBy: { username: 'admin', automated: false } },
      syncResult: { revision: 'rev-0000002' },
    });
    expect(a.status?.sync?.status).toBe('OutOfSync');
    expect(a.status?.health?.status).toBe('Progressing');
  });

  it("carries a selective sync's resources to the sync service, and leaves it out of status.history as Argo CD", async () => {
    const before = (await get()).status?.history.length ?? 0;
    const nc = await h.bus.connect('admin');
    try {
      const picked = { group: 'apps', kind: 'Deployment', name: 'guestbook-ui', namespace: 'team-a-prod' };
      const res = await unary(
        c.applications.sync.bind(c.applications),
        {
          name: 'guestbook',
          appNamespace: '',
          revision: '',
          dryRun: false,
          prune: true,
          resources: [picked],
          revisions: [],
          sourcePositions: [],
        },
        { metadata: bearer(admin) },
      );
      await h.api.flushOutbox();
      const subject = `${h.bus.namespace}.cmd.sync.request`;
      const jsm = await nc.jetstreamManager();
      const stream = await jsm.streams.find(subject);
      const consumer = await jsm.consumers.add(stream, {
        ack_policy: AckPolicy.None,
        filter_subject: subject,
        deliver_policy: DeliverPolicy.All,
      });
      const messages = await (
        await nc.jetstream().consumers.get(stream, consumer.name)
      ).fetch({ max_messages: 20, expires: 3000 });
      const requests: { data: { operationId: string } }[] = [];
      for await (const m of messages) requests.push(m.json());
      expect(requests.find((r) => r.data.operationId === res.operationId)).toMatchObject({
        data: { prune: true, resources: [picked] },
      });
      await runOperation(res.operationId, { revision: 'rev-0000003', outcome: 'succeeded' });
      const a = await get();
      expect(a.status?.operationState?.operation?.sync?.resources).toEqual([picked]);
      expect(a.status?.history.length).toBe(before);
      expect((await operations()).items[0]).toMatchObject({ id: res.operationId, syncResources: [picked] });
    } finally {
      await nc.close();
    }
    // Bad input: a clear error with the field path.
    const bad = await grpcError(
      unary(
        c.applications.sync.bind(c.applications),
        {
          name: 'guestbook',
          appNamespace: '',
          revision: '',
          dryRun: true,
          prune: false,
          resources: [{ group: 'apps', kind: '', name: 'x', namespace: '' }],
          revisions: [],
          sourcePositions: [],
        },
        { metadata: bearer(admin) },
      ),
    );
    expect(bad.code).toBe(grpcStatus.INVALID_ARGUMENT);
    expect(bad.details).toContain('resources[0].kind');
  });

  it('rolls back to a history entry as a sync of its revision with the trigger rollback, refused as Argo CD refuses it', async () => {
    const denied = await grpcError(
      unary(
        c.applications.rollback.bind(c.applications),
        { name: 'guestbook', id: 0, dryRun: false, prune: false, appNamespace: '', project: '' },
        { metadata: bearer(bob) },
      ),
    );
    expect(denied.code).toBe(grpcStatus.PERMISSION_DENIED);
    const deny = await sql<{ decision: string }>`select decision from audit.access_decisions
      where subject = 'user:bob' and resource = 'applications' and action = 'sync' and object = 'team-a/guestbook'`.execute(
      h.api.services.db,
    );
    expect(deny.rows).toEqual([{ decision: 'deny' }]);

    const unknown = await grpcError(
      unary(
        c.applications.rollback.bind(c.applications),
        { name: 'guestbook', id: 7, dryRun: false, prune: false, appNamespace: '', project: '' },
        { metadata: bearer(admin) },
      ),
    );
    expect(unknown.code).toBe(grpcStatus.INVALID_ARGUMENT);
    expect(unknown.details).toBe('application guestbook does not have deployment with id 7');

    const nc = await h.bus.connect('admin');
    try {
      const res = await unary(
        c.applications.rollback.bind(c.applications),
        { name: 'guestbook', id: 0, dryRun: false, prune: true, appNamespace: '', project: '' },
        { metadata: bearer(admin) },
      );
      await h.api.flushOutbox();
      const subject = `${h.bus.namespace}.cmd.sync.request`;
      const jsm = await nc.jetstreamManager();
      const stream = await jsm.streams.find(subject);
      const consumer = await jsm.consumers.add(stream, {
        ack_policy: AckPolicy.None,
        filter_subject: subject,
        deliver_policy: DeliverPolicy.All,
      });
      const messages = await (
        await nc.jetstream().consumers.get(stream, consumer.name)
      ).fetch({ max_messages: 10, expires: 3000 });
      const requests: { data: { operationId: string } }[] = [];
      for await (const m of messages) requests.push(m.json());
      expect(requests.find((r) => r.data.operationId === res.operationId)).toMatchObject({
        type: 'io.capstan.cmd.sync.request.v1',
        actor: 'user:admin',
        data: {
          revision: 'rev-0000001',
          prune: true,
          dryRun: false,
          trigger: { kind: 'rollback', actor: 'user:admin' },
        },
      });
      expect((await operations()).items[0]).toMatchObject({
        id: res.operationId,
        trigger: 'rollback',
        revision: 'rev-0000001',
      });
      // As Argo CD: the operation names the revision; spec.targetRevision is unchanged.
      expect((await get()).spec?.source?.targetRevision).toBe('HEAD');
    } finally {
      await nc.close();
    }

    const auto = apiv1.Application.fromJSON({
      ...guestbook('team-a'),
      spec: { ...guestbook('team-a').spec, syncPolicy: { automated: { prune: true } } },
    });
    await unary(
      c.applications.update.bind(c.applications),
      { application: auto },
      { metadata: bearer(admin) },
    );
    const refused = await grpcError(
      unary(
        c.applications.rollback.bind(c.applications),
        { name: 'guestbook', id: 0, dryRun: false, prune: false, appNamespace: '', project: '' },
        { metadata: bearer(admin) },
      ),
    );
    expect(refused.code).toBe(grpcStatus.FAILED_PRECONDITION);
    expect(refused.details).toBe('rollback cannot be initiated when auto-sync is enabled');
  });
});
