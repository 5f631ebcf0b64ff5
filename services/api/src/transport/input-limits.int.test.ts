// Bad input at the api's edges, over both transports against real PostgreSQL and NATS: a NUL or a
// lone surrogate in any string (even the unauthenticated login's), nesting, string and body sizes,
// and YAML alias bombs are refused with INVALID_ARGUMENT / 400 naming the field, and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { sql } from 'kysely';
import { apiv1, fieldViolationsOf } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError, guestbook, httpClient, teamA } from '../test-support/fixtures.js';

const BILLION_LAUGHS = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...'bcdefghi'.split('').map((c, i) => `${c}: &${c} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`),
].join('\n');

describe('api edges: input limits', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let http: ReturnType<typeof httpClient>;
  let admin: string;

  const loginRows = async () =>
    Number(
      (
        await sql<{
          n: string;
        }>`select count(*) as n from audit.access_decisions where resource = 'accounts'`.execute(
          h.api.services.db,
        )
      ).rows[0]!.n,
    );

  beforeAll(async () => {
    h = await startHarness();
    c = h.clients();
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
  });
  afterAll(async () => h?.stop());

  it('refuses a NUL in the login username over HTTP and gRPC before any lookup or audit row', async () => {
    const before = await loginRows();
    const r = await http('POST', '/api/v1/session', undefined, { username: 'ad\u0000min', password: 'x' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: [{ field: 'username', description: 'value must not contain NUL (U+0000)' }],
    });
    const err = await grpcError(
      unary(c.sessions.create.bind(c.sessions), { username: 'admin', password: 'pass\u0000word' }),
    );
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(fieldViolationsOf(err)).toEqual([
      { field: 'password', description: 'value must not contain NUL (U+0000)' },
    ]);
    expect(await loginRows()).toBe(before);
  });

  it('refuses a lone surrogate (which PostgreSQL cannot store) naming the field', async () => {
    const r = await http(
      'POST',
      '/api/v1/projects',
      admin,
      '{"project":{"metadata":{"name":"p-surrogate"},"spec":{"description":"x\\ud800"}}}',
    );
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual([
      {
        field: 'project.spec.description',
        description: 'value must be valid Unicode (it contains a lone UTF-16 surrogate)',
      },
    ]);
    expect((await http('GET', '/api/v1/projects/p-surrogate', admin)).status).toBe(404);
  });

  it('refuses a NUL anywhere in a gRPC write and stores nothing', async () => {
    const project = apiv1.Project.fromJSON({
      ...teamA,
      metadata: { name: 'team-nul' },
      spec: { ...teamA.spec, sourceRepos: ['https://git.example.com/\u0000'] },
    });
    const err = await grpcError(
      unary(c.projects.create.bind(c.projects), { project, upsert: false }, { metadata: bearer(admin) }),
    );
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(fieldViolationsOf(err)).toEqual([
      { field: 'project.spec.sourceRepos[0]', description: 'value must not contain NUL (U+0000)' },
    ]);
    expect((await http('GET', '/api/v1/projects/team-nul', admin)).status).toBe(404);
  });

  it('bounds nesting depth and string length, naming the field', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = { d: deep };
    const nested = await http('POST', '/api/v1/projects', admin, {
      project: { metadata: { name: 'p-deep', labels: deep }, spec: {} },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.details[0].description).toBe('nested deeper than 64 levels');
    expect(nested.body.details[0].field).toMatch(/^project\.metadata\.labels\.d\.d/);

    const long = await http('POST', '/api/v1/projects', admin, {
      project: { metadata: { name: 'p-long' }, spec: { description: 'x'.repeat(130 * 1024) } },
    });
    expect(long.status).toBe(400);
    expect(long.body.details).toEqual([
      { field: 'project.spec.description', description: 'value is longer than 131072 characters' },
    ]);
    expect((await http('GET', '/api/v1/projects/p-long', admin)).status).toBe(404);
  });

  it('refuses bodies and gRPC messages over api.body-limit (413 / RESOURCE_EXHAUSTED)', async () => {
    const big = await http('POST', '/api/v1/apply', admin, { manifests: '#'.repeat(300 * 1024) });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ code: 'RESOURCE_EXHAUSTED', message: 'request body is too large' });
    const err = await grpcError(
      unary(
        c.apply.apply.bind(c.apply),
        { manifests: '#'.repeat(300 * 1024), dryRun: true, strict: false },
        { metadata: bearer(admin) },
      ),
    );
    expect(err.code).toBe(status.RESOURCE_EXHAUSTED);
  });

  it("lets apply's manifests text exceed the string bound (the body limit bounds it)", async () => {
    const manifests = `# ${'x'.repeat(140 * 1024)}\napiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: p-big-text}\nspec: {}\n`;
    const r = await http('POST', '/api/v1/apply', admin, { manifests, dryRun: true });
    expect(r.status).toBe(200);
    expect(r.body.results[0]).toMatchObject({
      kind: 'AppProject',
      name: 'p-big-text',
      action: 'would-create',
    });
  });

  it('refuses a YAML alias bomb given to apply with 400, over HTTP and gRPC', async () => {
    const manifests = `apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: p-ok}\nspec: {}\n---\n${BILLION_LAUGHS}\n`;
    const r = await http('POST', '/api/v1/apply', admin, { manifests });
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual([
      {
        field: 'document 2',
        description: 'invalid YAML: aliases expand more than 100 times (refused as a possible alias bomb)',
      },
    ]);
    const err = await grpcError(
      unary(
        c.apply.apply.bind(c.apply),
        { manifests, dryRun: false, strict: false },
        { metadata: bearer(admin) },
      ),
    );
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect((await http('GET', '/api/v1/projects/p-ok', admin)).status).toBe(404);
  });

  it('refuses a NUL inside an applied YAML document, naming document and field', async () => {
    const manifests = `apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: p-yaml-nul}\nspec: {description: "a\\0b"}\n`;
    const r = await http('POST', '/api/v1/apply', admin, { manifests });
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual([
      { field: 'document 1: spec.description', description: 'value must not contain NUL (U+0000)' },
    ]);
  });

  it('validates namespaces as Kubernetes namespace names (DNS labels), naming the field', async () => {
    const app = guestbook('team-a', 'ns-check');
    const r = await http('POST', '/api/v1/applications', admin, {
      application: {
        ...app,
        metadata: { name: 'ns-check', namespace: 'Argo_CD' },
        spec: { ...app.spec, destination: { ...app.spec.destination, namespace: 'team-a-prod/../x' } },
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.details.map((d: { field: string }) => d.field)).toEqual([
      'metadata.namespace',
      'spec.destination.namespace',
    ]);
    expect((await http('GET', '/api/v1/applications/ns-check', admin)).status).toBe(404);
  });
});
