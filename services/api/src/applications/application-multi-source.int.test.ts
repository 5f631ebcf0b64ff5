// Argo CD's spec.sources through the real api (PostgreSQL, NATS, gRPC and HTTP): the sources (with
// `ref` and `$ref/…` value files) round-trip through the gRPC message and HTTP, a gRPC update keeps
// them, and bad ones are refused with their field paths (`spec.sources[i].…`) before anything is stored.
// A sync pins sources by position (Argo CD's revisions + sourcePositions): the command to the sync
// service carries one revision per source, and status.history records each source's revision.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { AckPolicy, DeliverPolicy } from 'nats';
import { connectBus, newEvent, syncStarted, syncSucceeded } from '@capstan/events';
import { apiv1, fieldViolationsOf } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError, httpClient } from '../test-support/fixtures.js';

const SOURCES = [
  {
    repoURL: 'https://git.example.com/charts.git',
    path: 'charts/web',
    targetRevision: 'main',
    helm: { valueFiles: ['$values/envs/prod/values.yaml', 'values.yaml'] },
  },
  {
    repoURL: 'https://git.example.com/values.git',
    targetRevision: 'main',
    ref: 'values',
    name: 'prod values',
  },
];

const manifest = (name: string, spec: Record<string, unknown>) => ({
  metadata: { name },
  spec: {
    project: 'default',
    destination: { server: 'https://kubernetes.default.svc', namespace: 'web' },
    ...spec,
  },
});

describe('multi-source Applications through the api', () => {
  let h: Harness;
  let admin: { metadata: ReturnType<typeof bearer> };
  let token: string;
  let http: ReturnType<typeof httpClient>;

  beforeAll(async () => {
    h = await startHarness();
    token = await h.login('admin', ADMIN_PASSWORD);
    admin = { metadata: bearer(token) };
    http = httpClient(h);
    const c = h.clients();
    await unary(
      c.projects.create.bind(c.projects),
      {
        project: apiv1.Project.fromJSON({
          metadata: { name: 'default' },
          spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
        }),
        upsert: false,
      },
      admin,
    );
  }, 120_000);
  afterAll(async () => h?.stop());

  it('round-trips spec.sources through gRPC (create, get, update) and HTTP', async () => {
    const c = h.clients();
    const created = await unary(
      c.applications.create.bind(c.applications),
      { application: apiv1.Application.fromJSON(manifest('multi', { sources: SOURCES })), upsert: false },
      admin,
    );
    expect(created.spec?.source).toBeUndefined();
    const got = await unary(
      c.applications.get.bind(c.applications),
      { name: 'multi', appNamespace: '', project: '' },
      admin,
    );
    expect(got.spec!.sources.map((s) => apiv1.ApplicationSource.toJSON(s))).toEqual(SOURCES);
    // No revision yet: Argo's shape, revisions per source and no single revision.
    expect(got.status?.sync?.revisions).toEqual([]);
    // A gRPC get-modify-update keeps both sources.
    got.spec!.sources[1]!.targetRevision = 'release';
    const updated = await unary(c.applications.update.bind(c.applications), { application: got }, admin);
    expect(updated.spec!.sources[1]).toMatchObject({ ref: 'values', targetRevision: 'release' });
    const viaHttp = await http('GET', '/api/v1/applications/multi', token);
    expect(viaHttp.body.spec.sources).toEqual([SOURCES[0], { ...SOURCES[1], targetRevision: 'release' }]);
    expect(viaHttp.body.spec).not.toHaveProperty('source');
    expect(viaHttp.body.status.sync).toMatchObject({ revision: '', revisions: [] });
    const posted = await http('POST', '/api/v1/applications', token, {
      application: manifest('multi-http', { sources: SOURCES }),
    });
    expect(posted.status).toBe(200);
    expect(posted.body.spec.sources).toEqual(SOURCES);
    // A single revision cannot say which source it is for: refused, never silently ignored.
    const synced = await http('POST', '/api/v1/applications/multi-http/sync', token, { revision: 'v2' });
    expect(synced.status).toBe(400);
    expect(JSON.stringify(synced.body)).toContain('a single revision is not supported');
    expect(JSON.stringify(synced.body)).toContain('--source-positions');
  });

  /** The sync requests the api has published (the sync service's command stream). */
  const publishedSyncRequests = async () => {
    await h.api.flushOutbox();
    const nc = await h.bus.connect('admin');
    try {
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
      ).fetch({ max_messages: 50, expires: 3000 });
      const requests: { data: { operationId: string; revisions?: string[]; revision?: string } }[] = [];
      for await (const m of messages) requests.push(m.json());
      return requests;
    } finally {
      await nc.close();
    }
  };

  it("syncs sources at revisions by position (Argo CD's --revisions/--source-positions), recorded per source in status.history", async () => {
    const c = h.clients();
    await unary(
      c.applications.create.bind(c.applications),
      { application: apiv1.Application.fromJSON(manifest('pinned', { sources: SOURCES })), upsert: false },
      admin,
    );
    const sync = (over: Partial<apiv1.ApplicationSyncRequest>) =>
      unary(
        c.applications.sync.bind(c.applications),
        {
          name: 'pinned',
          appNamespace: '',
          revision: '',
          dryRun: false,
          prune: false,
          resources: [],
          revisions: [],
          sourcePositions: [],
          ...over,
        },
        admin,
      );
    const res = await sync({ revisions: ['values-v1'], sourcePositions: [2] });
    const command = (await publishedSyncRequests()).find((r) => r.data.operationId === res.operationId);
    // The source not named syncs at its targetRevision; the one named at the revision given.
    expect(command?.data.revisions).toEqual(['main', 'values-v1']);
    expect(command?.data).not.toHaveProperty('revision');
    const requested = await unary(
      c.applications.getOperation.bind(c.applications),
      { name: 'pinned', appNamespace: '', id: res.operationId },
      admin,
    );
    expect(requested.revisions).toEqual(['main', 'values-v1']);

    // The sync service resolves both and reports each source's commit: status.history keeps them.
    const sync1 = await connectBus({ ...h.bus.connection('sync'), service: 'sync' });
    const application = { name: 'pinned', namespace: 'argocd' };
    const meta = { subject: 'applications/argocd/pinned', actor: 'service:sync', source: 'capstan/sync' };
    const shas = ['c'.repeat(40), 'd'.repeat(40)];
    try {
      await sync1.publish(
        newEvent(
          syncStarted.type,
          { operationId: res.operationId, application, dryRun: false, attempt: 1 },
          meta,
        ),
      );
      await sync1.publish(
        newEvent(
          syncSucceeded.type,
          {
            operationId: res.operationId,
            application,
            revision: shas[0]!,
            revisions: shas,
            dryRun: false,
            identity: { impersonation: false, username: 'capstan' },
            resources: 1,
            pruned: 0,
          },
          meta,
        ),
      );
    } finally {
      await sync1.close();
    }
    await expect
      .poll(
        async () => {
          const got = await http('GET', '/api/v1/applications/pinned', token);
          return (got.body.status.history ?? []).at(-1);
        },
        { timeout: 15_000, interval: 100 },
      )
      .toMatchObject({ revision: '', revisions: shas, sources: SOURCES });
  });

  it('refuses per-source revisions as Argo CD does, with its messages, and a revision it could not apply', async () => {
    const c = h.clients();
    await unary(
      c.applications.create.bind(c.applications),
      {
        application: apiv1.Application.fromJSON(
          manifest('pinned-auto', { sources: SOURCES, syncPolicy: { automated: { prune: false } } }),
        ),
        upsert: false,
      },
      admin,
    );
    await unary(
      c.applications.create.bind(c.applications),
      {
        application: apiv1.Application.fromJSON(manifest('single', { source: SOURCES[0] })),
        upsert: false,
      },
      admin,
    );
    const post = (name: string, body: Record<string, unknown>) =>
      http('POST', `/api/v1/applications/${name}/sync`, token, body);
    const refused = async (name: string, body: Record<string, unknown>, code: number, text: string) => {
      const r = await post(name, body);
      expect(r.status, JSON.stringify(r.body)).toBe(code);
      expect(JSON.stringify(r.body)).toContain(text);
    };
    await refused(
      'multi-http',
      { revisions: ['a', 'b'], sourcePositions: [1] },
      400,
      'While using --revisions and --source-positions, length of values for both flags should be same.',
    );
    await refused(
      'multi-http',
      { revisions: ['a'], sourcePositions: [0] },
      400,
      'source-position cannot be less than or equal to 0, Counting starts at 1',
    );
    await refused(
      'multi-http',
      { revisions: ['a'], sourcePositions: [3] },
      400,
      'source position is out of range',
    );
    await refused(
      'multi-http',
      { revision: 'x', revisions: ['a'], sourcePositions: [1] },
      400,
      'revision and revisions are both set',
    );
    await refused('single', { revisions: ['a'], sourcePositions: [1] }, 400, 'use revision');
    // Automated sync follows the targets: another revision is for a dry run only (Argo CD's message).
    await refused(
      'pinned-auto',
      { revisions: ['v9'], sourcePositions: [2] },
      412,
      `Cannot sync source ${SOURCES[1]!.repoURL} to v9: auto-sync currently set to main`,
    );
    expect(
      (await post('pinned-auto', { revisions: ['v9'], sourcePositions: [2], dryRun: true })).status,
    ).toBe(200);
    // The target itself is no override: allowed while automated.
    expect((await post('pinned-auto', { revisions: ['main'], sourcePositions: [2] })).status).toBe(200);
    const err = await grpcError(
      unary(
        c.applications.sync.bind(c.applications),
        {
          name: 'multi-http',
          appNamespace: '',
          revision: '',
          dryRun: false,
          prune: false,
          resources: [],
          revisions: ['a'],
          sourcePositions: [],
        },
        admin,
      ),
    );
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(fieldViolationsOf(err).map((v) => v.field)).toEqual(['sourcePositions']);
  });

  it('refuses bad sources with field paths, over gRPC and HTTP, storing nothing', async () => {
    const c = h.clients();
    const bad = manifest('bad-multi', {
      sources: [
        { ...SOURCES[0], helm: { valueFiles: ['$values/../../etc/passwd', '$nope/v.yaml'] } },
        { ...SOURCES[1], ref: 'values!' },
      ],
    });
    const err = await grpcError(
      unary(
        c.applications.create.bind(c.applications),
        { application: apiv1.Application.fromJSON(bad), upsert: false },
        admin,
      ),
    );
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(fieldViolationsOf(err).map((v) => v.field)).toEqual([
      'spec.sources[1].ref',
      'spec.sources[0].helm.valueFiles[0]',
      'spec.sources[0].helm.valueFiles[1]',
    ]);
    const both = await http('POST', '/api/v1/applications', token, {
      application: manifest('both', { source: SOURCES[0], sources: SOURCES }),
    });
    expect(both.status).toBe(400);
    expect(both.body.details).toEqual([
      {
        field: 'spec.source',
        description:
          'source and sources are both set: set one (Argo CD ignores spec.source when spec.sources is set)',
      },
    ]);
    expect((await http('GET', '/api/v1/applications/bad-multi', token)).status).toBe(404);
    expect((await http('GET', '/api/v1/applications/both', token)).status).toBe(404);
  });
});
