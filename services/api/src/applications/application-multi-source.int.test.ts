// Argo CD's spec.sources through the real api (PostgreSQL, NATS, gRPC and HTTP): the sources (with
// `ref` and `$ref/…` value files) round-trip through the gRPC message and HTTP, a gRPC update keeps
// them, and bad ones are refused with their field paths (`spec.sources[i].…`) before anything is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
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
