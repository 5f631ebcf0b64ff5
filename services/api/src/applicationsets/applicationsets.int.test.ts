// The public ApplicationSetService on the real api (gRPC and HTTP on Argo CD's paths, PostgreSQL):
// without appset.address every call answers UNAVAILABLE and an apply that holds a set writes
// nothing; with an appset service (a stand-in that authenticates the api as the real one must and
// calls back ApplicationSetWritesService), calls are forwarded with the user's delegations, sets are
// visible only to those who may get every Application they own, and `apply` upserts them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { testPki } from '@capstan/test/infra';
import { apiv1 } from '@capstan/proto';
import { DelegationVerifier, delegationPublicKeys } from '@capstan/service-identity';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError, httpClient } from '../test-support/fixtures.js';
import {
  API_TO_APPSET_TOKEN,
  startAppsetStandIn,
  type AppsetStandIn,
} from '../test-support/appset-stand-in.js';

const project = (name: string) => ({
  metadata: { name },
  spec: {
    sourceRepos: [`https://git.example.com/${name}/*`],
    destinations: [{ server: 'https://kubernetes.default.svc', namespace: `${name}-*` }],
    roles: [
      {
        name: 'dev',
        policies: [`p, proj:${name}:dev, applications, *, ${name}/*, allow`],
        groups: [`tenant-${name}`],
      },
    ],
  },
});

const appSet = (name: string, elements: { name: string; project: string }[]) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'ApplicationSet',
  metadata: { name, namespace: 'argocd' },
  spec: {
    generators: [{ list: { elements } }],
    template: { metadata: { name: '{{name}}' }, spec: { project: '{{project}}' } },
  },
});

describe('ApplicationSets without an appset service', () => {
  let h: Harness;
  let http: ReturnType<typeof httpClient>;
  let admin: string;
  beforeAll(async () => {
    h = await startHarness();
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
  });
  afterAll(async () => h?.stop());

  it('answers UNAVAILABLE naming the missing setting, over gRPC and HTTP', async () => {
    const c = h.clients().applicationSets;
    const e = await grpcError(
      unary(c.list.bind(c), apiv1.ApplicationSetListQuery.fromPartial({}), { metadata: bearer(admin) }),
    );
    expect(e.code).toBe(status.UNAVAILABLE);
    expect(e.details).toBe('the appset service is not configured (appset.address)');
    const res = await http('POST', '/api/v1/applicationsets?upsert=true', admin, appSet('s', []));
    expect(res.status).toBe(503);
    expect(res.body.message).toContain('appset.address');
  });

  it('refuses an apply that holds an ApplicationSet before writing anything', async () => {
    const manifests = [
      JSON.stringify({ apiVersion: 'argoproj.io/v1alpha1', kind: 'AppProject', ...project('team-x') }),
      JSON.stringify(appSet('s', [])),
    ].join('\n---\n');
    const res = await http('POST', '/api/v1/apply', admin, { manifests });
    expect(res.status).toBe(503);
    expect((await http('GET', '/api/v1/projects/team-x', admin)).status).toBe(404);
  });

  it("documents Argo CD's paths in the OpenAPI document", async () => {
    const doc = (await http('GET', '/api/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/v1/applicationsets'])).toEqual(['get', 'post']);
    expect(doc.paths['/api/v1/applicationsets/{name}'].delete.operationId).toBe(
      'ApplicationSetService.Delete',
    );
    expect(doc.paths['/api/v1/applicationsets/generate'].post.operationId).toBe(
      'ApplicationSetService.Generate',
    );
    const post = doc.paths['/api/v1/applicationsets'].post;
    expect(post.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['dryRun', 'upsert']);
  });
});

describe('ApplicationSets forwarded to the appset service', () => {
  let h: Harness;
  let appset: AppsetStandIn;
  let http: ReturnType<typeof httpClient>;
  let admin: string;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    appset = await startAppsetStandIn(await testPki());
    h = await startHarness({ 'appset.address': appset.address, 'appset.service-token': API_TO_APPSET_TOKEN });
    appset.apiAddress = h.grpcAddress;
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
    for (const name of ['team-a', 'team-b'])
      expect((await http('POST', '/api/v1/projects', admin, { project: project(name) })).status).toBe(200);
    for (const [user, group] of [
      ['alice', 'tenant-team-a'],
      ['bob', 'tenant-team-b'],
    ])
      expect(
        (
          await http('POST', '/api/v1/account', admin, {
            name: user,
            password: `${user}-password`,
            groups: [group],
          })
        ).status,
      ).toBe(200);
    alice = await h.login('alice', 'alice-password');
    bob = await h.login('bob', 'bob-password');
  });
  afterAll(async () => {
    await h?.stop();
    await appset?.stop();
  });

  it("creates a set (HTTP body = the ApplicationSet) with the user's delegations, and its Applications", async () => {
    const res = await http(
      'POST',
      '/api/v1/applicationsets?upsert=true',
      alice,
      appSet('set-a', [
        { name: 'a-one', project: 'team-a' },
        { name: 'a-two', project: 'team-a' },
      ]),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.metadata).toMatchObject({ name: 'set-a', namespace: 'argocd' });
    const app = await http('GET', '/api/v1/applications/a-one', alice);
    expect(app.status).toBe(200);
    // Owned by the set, as Argo CD shows it (metadata.ownerReferences, the set as controller).
    expect(app.body.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'ApplicationSet',
        name: 'set-a',
        controller: true,
      }),
    ]);
    const call = appset.received.find((r) => r.method === 'Upsert')!;
    expect(call.delegation).toMatchObject({ user: 'alice', holder: 'api', kind: 'user' });
    const keys = delegationPublicKeys((await testPki()).delegation.publicKeyPem);
    const toApi = await new DelegationVerifier(keys, 'api').verify(call.callerDelegations!.api, 'appset');
    const toRepo = await new DelegationVerifier(keys, 'repo').verify(call.callerDelegations!.repo, 'appset');
    expect([toApi.user, toRepo.user]).toEqual(['alice', 'alice']);
  });

  it('refuses a set that would generate into another tenant, naming the Application, and writes nothing', async () => {
    // appset answers a refusal with the verdicts (not an error): the api's caller gets a refusal for
    // create, its dry run, and a declarative apply alike, never a success.
    const set = appSet('set-x', [
      { name: 'x-ok', project: 'team-a' },
      { name: 'x-in-b', project: 'team-b' },
    ]);
    const reason =
      'application "x-in-b" (project "team-b", create): permission denied: applications, create, team-b/x-in-b';
    for (const path of ['/api/v1/applicationsets', '/api/v1/applicationsets?dryRun=true']) {
      const res = await http('POST', path, alice, set);
      expect(res.status, path).toBe(403);
      expect(res.body.message).toContain(`1 of 2 Applications refused: ${reason}`);
    }
    const applied = await http('POST', '/api/v1/apply', alice, { manifests: JSON.stringify(set) });
    expect(applied.status).toBe(403);
    expect(applied.body.message).toContain(reason);
    expect((await http('GET', '/api/v1/applications/x-ok', admin)).status).toBe(404);
    expect((await http('GET', '/api/v1/applicationsets/set-x', alice)).status).toBe(404);
  });

  it('shows a set only to those who may get every Application it owns', async () => {
    expect((await http('GET', '/api/v1/applicationsets/set-a', alice)).body.spec.generators).toHaveLength(1);
    const c = h.clients().applicationSets;
    const e = await grpcError(
      unary(c.get.bind(c), apiv1.ApplicationSetGetQuery.fromPartial({ name: 'set-a' }), {
        metadata: bearer(bob),
      }),
    );
    expect(e.code).toBe(status.PERMISSION_DENIED);
    const names = async (token: string, query = '') =>
      ((await http('GET', `/api/v1/applicationsets${query}`, token)).body.items ?? []).map(
        (s: { metadata: { name: string } }) => s.metadata.name,
      );
    expect(await names(alice)).toEqual(['set-a']);
    expect(await names(bob)).toEqual([]);
    expect(await names(alice, '?projects=team-b')).toEqual([]);
    expect(await names(admin, '?projects=team-a')).toEqual(['set-a']);
  });

  it("generates without writing, with the caller's verdict on each Application", async () => {
    const res = await http('POST', '/api/v1/applicationsets/generate', bob, {
      applicationSet: appSet('set-g', [
        { name: 'g-b', project: 'team-b' },
        { name: 'g-a', project: 'team-a' },
      ]),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.applications.map((a: { metadata: { name: string } }) => a.metadata.name)).toEqual([
      'g-a',
      'g-b',
    ]);
    expect(
      res.body.verdicts.map((v: { name: string; allowed?: boolean }) => [v.name, v.allowed ?? false]),
    ).toEqual([
      ['g-a', false],
      ['g-b', true],
    ]);
    expect((await http('GET', '/api/v1/applications/g-b', admin)).status).toBe(404);
  });

  it('applies an ApplicationSet declaratively: created, unchanged, configured, and a dry run writes nothing', async () => {
    const doc = (elements: { name: string; project: string }[]) => JSON.stringify(appSet('set-d', elements));
    const apply = async (manifests: string, dryRun = false) =>
      (await http('POST', '/api/v1/apply', alice, { manifests, dryRun })).body.results;
    expect(await apply(doc([{ name: 'd-one', project: 'team-a' }]))).toMatchObject([
      { kind: 'ApplicationSet', name: 'set-d', namespace: 'argocd', action: 'created' },
    ]);
    expect(await apply(doc([{ name: 'd-one', project: 'team-a' }]))).toMatchObject([{ action: 'unchanged' }]);
    const two = doc([
      { name: 'd-one', project: 'team-a' },
      { name: 'd-two', project: 'team-a' },
    ]);
    expect(await apply(two, true)).toMatchObject([{ action: 'would-configure' }]);
    expect((await http('GET', '/api/v1/applications/d-two', admin)).status).toBe(404);
    expect(await apply(two)).toMatchObject([{ action: 'configured' }]);
    expect((await http('GET', '/api/v1/applications/d-two', admin)).status).toBe(200);
  });

  it('deletes a set only for a caller who may delete each of its Applications', async () => {
    expect((await http('DELETE', '/api/v1/applicationsets/set-a', bob)).status).toBe(403);
    expect((await http('GET', '/api/v1/applications/a-one', admin)).status).toBe(200);
    const res = await http('DELETE', '/api/v1/applicationsets/set-a', alice);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.applications.map((v: { name: string; action: string }) => [v.name, v.action])).toEqual([
      ['a-one', 'delete'],
      ['a-two', 'delete'],
    ]);
    // Not preserved: each Application stays, marked for a cascade deletion, until the sync service
    // (absent here) has deleted its resources.
    const marked = await http('GET', '/api/v1/applications/a-one', admin);
    expect(marked.body.metadata).toMatchObject({
      finalizers: ['resources-finalizer.argocd.argoproj.io'],
      deletionTimestamp: expect.any(String),
    });
  });
});
