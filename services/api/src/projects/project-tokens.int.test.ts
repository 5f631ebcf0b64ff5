// Project role tokens (argocd proj role create-token / delete-token / list-tokens) on the real api
// (PostgreSQL, NATS, gRPC and HTTP): a token's rights are exactly its role's policy lines, of today;
// creating and deleting need `projects, update`; a deleted token, one past its expiry, and one whose
// role went away (even if the role comes back) are refused; every decision is audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { sql } from 'kysely';
import { apiv1 } from '@capstan/proto';
import { createDb } from '@capstan/db';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError, httpClient } from '../test-support/fixtures.js';

const POLICY = `
p, role:project-editor, projects, update, team-a, allow
p, role:project-editor, projects, get, team-a, allow
g, editors, role:project-editor
`;

describe('api: project role tokens', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let http: ReturnType<typeof httpClient>;
  let admin: string;
  let editor: string;
  let outsider: string;

  const as = (token: string) => ({ metadata: bearer(token) });
  const createToken = (token: string, req: Partial<apiv1.ProjectTokenCreateRequest>) =>
    unary(
      c.projects.createToken.bind(c.projects),
      apiv1.ProjectTokenCreateRequest.fromPartial({ project: 'team-a', role: 'ci', ...req }),
      as(token),
    );
  const canI = async (token: string, resource: string, action: string, object: string) =>
    (await unary(c.accounts.canI.bind(c.accounts), { resource, action, subresource: object }, as(token)))
      .value;
  const setRoles = async (roles: { name: string; policies: string[] }[]) => {
    const p = await unary(c.projects.get.bind(c.projects), { name: 'team-a' }, as(admin));
    p.spec!.roles = roles.map((r) => ({ ...r, description: '', groups: [] }));
    await unary(c.projects.update.bind(c.projects), { project: p }, as(admin));
  };
  const account = async (name: string, groups: string[]) => {
    const password = `${name}-password-1`;
    const r = await http('POST', '/api/v1/account', admin, {
      name,
      password,
      groups,
      capabilities: ['login'],
    });
    expect(r.status).toBe(200);
    return h.login(name, password);
  };

  beforeAll(async () => {
    h = await startHarness({ 'rbac.policy-csv': POLICY });
    c = h.clients();
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
    await unary(
      c.projects.create.bind(c.projects),
      {
        project: apiv1.Project.fromJSON({
          metadata: { name: 'team-a' },
          spec: {
            sourceRepos: ['*'],
            roles: [{ name: 'ci', policies: ['p, proj:team-a:ci, applications, get, team-a/*, allow'] }],
          },
        }),
        upsert: false,
      },
      as(admin),
    );
    editor = await account('editor', ['editors']);
    outsider = await account('outsider', []);
  });
  afterAll(async () => h?.stop());

  it("given projects, update on the project, when a token is created, then it carries exactly the role's lines, of today", async () => {
    const created = await createToken(editor, { id: 'ci-1' });
    expect(created.id).toBe('ci-1');
    expect(created.issuedAt).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(created.expiresAt).toBe(0);
    const claims = JSON.parse(Buffer.from(created.token.split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(claims).toMatchObject({ sub: 'proj:team-a:ci', jti: 'ci-1', iat: created.issuedAt });
    expect(claims.exp).toBeUndefined();

    expect(await canI(created.token, 'applications', 'get', 'team-a/guestbook')).toBe('yes');
    expect(await canI(created.token, 'applications', 'sync', 'team-a/guestbook')).toBe('no');
    expect(await canI(created.token, 'applications', 'get', 'team-b/guestbook')).toBe('no');
    // not the creator's rights: the editor may update the project, the token may not
    expect((await grpcError(createToken(created.token, { id: 'escalate' }))).code).toBe(
      status.PERMISSION_DENIED,
    );
    expect((await http('GET', '/api/v1/projects/team-a', created.token)).status).toBe(403);
    expect((await http('GET', '/api/v1/applications', created.token)).status).toBe(200);

    await setRoles([{ name: 'ci', policies: ['p, proj:team-a:ci, applications, *, team-a/*, allow'] }]);
    expect(await canI(created.token, 'applications', 'sync', 'team-a/guestbook')).toBe('yes');

    const listed = await unary(
      c.projects.listTokens.bind(c.projects),
      { project: 'team-a', role: 'ci' },
      as(editor),
    );
    expect(listed.items).toEqual([{ id: 'ci-1', iat: created.issuedAt, exp: 0 }]);
    expect(JSON.stringify(listed)).not.toContain(created.token.split('.')[2]);
  });

  it('refuses a caller without projects, update, a missing role, a duplicate id and a bad expiry, each audited', async () => {
    expect((await grpcError(createToken(outsider, { id: 'x' }))).code).toBe(status.PERMISSION_DENIED);
    const missing = await grpcError(createToken(editor, { role: 'nope' }));
    expect(missing.code).toBe(status.NOT_FOUND);
    expect(missing.details).toBe("project 'team-a' does not have role 'nope'");
    expect((await grpcError(createToken(editor, { id: 'ci-1' }))).code).toBe(status.ALREADY_EXISTS);
    const neg = await http('POST', '/api/v1/projects/team-a/roles/ci/token', editor, { expiresIn: -5 });
    expect(neg.status).toBe(400);
    expect(JSON.stringify(neg.body)).toContain('expiresIn');
    expect((await http('GET', '/api/v1/projects/team-a/roles/ci/token', outsider)).status).toBe(403);

    const db = createDb(h.db.url);
    try {
      const rows = await sql<{ subject: string; action: string; decision: string; reason: string }>`
        select subject, action, decision, reason from audit.access_decisions
         where resource = 'projects' and object = 'team-a' order by id`.execute(db);
      expect(rows.rows).toContainEqual(
        expect.objectContaining({ subject: 'user:outsider', action: 'update', decision: 'deny' }),
      );
      expect(rows.rows).toContainEqual(
        expect.objectContaining({ subject: 'proj:team-a:ci', action: 'update', decision: 'deny' }),
      );
      expect(rows.rows).toContainEqual({
        subject: 'user:editor',
        action: 'update',
        decision: 'allow',
        reason: 'created token ci-1 of role ci (expires never)',
      });
    } finally {
      await db.destroy();
    }
  });

  it('refuses a token once deleted by id or by issued-at, once expired, and when its role went away', async () => {
    const byId = await createToken(editor, { id: 'by-id' });
    const byIat = await createToken(editor, { id: 'by-iat', expiresIn: 3600 });
    expect(byIat.expiresAt).toBe(byIat.issuedAt + 3600);
    const short = await createToken(editor, { id: 'short', expiresIn: 1 });
    for (const t of [byId, byIat, short])
      expect(await canI(t.token, 'applications', 'get', 'team-a/x')).toBe('yes');

    await unary(
      c.projects.deleteToken.bind(c.projects),
      { project: 'team-a', role: 'ci', id: 'by-id', iat: 0 },
      as(editor),
    );
    const gone = await grpcError(canI(byId.token, 'applications', 'get', 'team-a/x'));
    expect(gone.code).toBe(status.UNAUTHENTICATED);
    expect(gone.details).toBe('token of proj:team-a:ci has been deleted or replaced');

    const del = await http('DELETE', `/api/v1/projects/team-a/roles/ci/token/${byIat.issuedAt}`, editor);
    expect(del.status).toBe(200);
    expect((await http('GET', '/api/v1/applications', byIat.token)).status).toBe(401);
    const again = await http('DELETE', `/api/v1/projects/team-a/roles/ci/token/${byIat.issuedAt}`, editor);
    expect(again.status).toBe(404);

    await new Promise((r) => setTimeout(r, 2100));
    expect((await grpcError(canI(short.token, 'applications', 'get', 'team-a/x'))).code).toBe(
      status.UNAUTHENTICATED,
    );

    const survivor = await createToken(editor, { id: 'survivor' });
    expect((await grpcError(unary(c.sessions.delete.bind(c.sessions), {}, as(survivor.token)))).code).toBe(
      status.PERMISSION_DENIED,
    );
    await setRoles([]);
    await setRoles([{ name: 'ci', policies: ['p, proj:team-a:ci, applications, get, team-a/*, allow'] }]);
    // the role is back, its tokens are not (the projection deleted them with the role)
    await new Promise((r) => setTimeout(r, 2100));
    expect((await grpcError(canI(survivor.token, 'applications', 'get', 'team-a/x'))).code).toBe(
      status.UNAUTHENTICATED,
    );
    const left = await unary(
      c.projects.listTokens.bind(c.projects),
      { project: 'team-a', role: 'ci' },
      as(admin),
    );
    expect(left.items).toEqual([]);
  }, 30_000);
});
