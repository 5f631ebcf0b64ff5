// Argo CD's spec.source.helm / .kustomize / .directory through the real api (PostgreSQL, NATS,
// gRPC and HTTP): the fields round-trip through the gRPC message and HTTP, and bad ones are refused
// with their field paths before anything is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { apiv1, fieldViolationsOf } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError, httpClient } from '../test-support/fixtures.js';

const manifest = (name: string, source: Record<string, unknown>) => ({
  metadata: { name },
  spec: {
    project: 'default',
    source: {
      repoURL: 'https://git.example.com/apps.git',
      path: 'charts/web',
      targetRevision: 'HEAD',
      ...source,
    },
    destination: { server: 'https://kubernetes.default.svc', namespace: 'web' },
  },
});

const HELM = {
  releaseName: 'web',
  valueFiles: ['values-prod.yaml'],
  values: 'secret: x\n',
  valuesObject: { image: { tag: 'v2' } },
  parameters: [
    { name: 'replicas', value: '3' },
    { name: 'image.tag', value: '1.0', forceString: true },
  ],
  fileParameters: [{ name: 'cfg', path: 'files/cfg.txt' }],
  skipCrds: true,
  kubeVersion: '1.31.0',
  apiVersions: ['monitoring.coreos.com/v1'],
};

describe('Application source tools through the api', () => {
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

  it('stores and returns the helm block through gRPC', async () => {
    const c = h.clients();
    await unary(
      c.applications.create.bind(c.applications),
      { application: apiv1.Application.fromJSON(manifest('helm-app', { helm: HELM })), upsert: false },
      admin,
    );
    const got = await unary(
      c.applications.get.bind(c.applications),
      { name: 'helm-app', appNamespace: '', project: '' },
      admin,
    );
    expect(apiv1.ApplicationSource.toJSON(got.spec!.source!)).toMatchObject({ helm: HELM });
  });

  it('stores kustomize and directory blocks through HTTP', async () => {
    const kustomize = {
      namePrefix: 'prod-',
      images: ['nginx=nginx:1.27'],
      commonLabels: { team: 'a' },
      replicas: [{ name: 'web', count: 2 }],
      patches: [{ target: { kind: 'Deployment' }, patch: '[]' }],
    };
    const res = await http('POST', '/api/v1/applications', token, {
      application: manifest('kust-app', { path: 'kust', kustomize }),
    });
    expect(res.status).toBe(200);
    const got = await http('GET', '/api/v1/applications/kust-app', token);
    expect(got.body.spec.source.kustomize).toMatchObject({
      namePrefix: 'prod-',
      images: ['nginx=nginx:1.27'],
    });
    const dir = await http('POST', '/api/v1/applications', token, {
      application: manifest('dir-app', {
        path: 'plain',
        directory: {
          recurse: true,
          include: '{a,b}/*.yaml',
          jsonnet: { extVars: [{ name: 'env', value: 'prod' }] },
        },
      }),
    });
    expect(dir.status).toBe(200);
  });

  it('refuses bad options with field paths, over gRPC and HTTP, storing nothing', async () => {
    const c = h.clients();
    const bad = manifest('bad-helm', {
      helm: {
        valueFiles: ['https://169.254.169.254/latest/meta-data'],
        parameters: [
          { name: 'a', value: '1' },
          { name: 'b', value: '2' },
          { name: 'c=d', value: '3' },
        ],
      },
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
      'spec.source.helm.valueFiles[0]',
      'spec.source.helm.parameters[2].name',
    ]);
    const viaHttp = await http('POST', '/api/v1/applications', token, {
      application: manifest('bad-kust', { kustomize: { images: ['-x'], typo: true } }),
    });
    expect(viaHttp.status).toBe(400);
    expect(viaHttp.body.details.map((d: { field: string }) => d.field)).toEqual([
      'spec.source.kustomize.typo',
    ]);
    expect((await http('GET', '/api/v1/applications/bad-helm', token)).status).toBe(404);
  });
});
