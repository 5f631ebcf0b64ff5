// The RBAC of the Application's live views (ResourceTree, ListResourceEvents, ExplainSync), on real
// PostgreSQL and NATS: they need `applications, get` on the Application's project, as reading the
// Application does. A caller with that right on another project only is refused with Argo CD's
// text, a missing Application is refused the same way (it cannot be told from a forbidden one),
// and every refusal is in the audit trail as other denials are. The api has no sync service here:
// a caller who passes RBAC gets UNAVAILABLE naming the missing setting, so the check is seen to pass.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { status } from '@grpc/grpc-js';
import { apiv1 } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError, guestbook, httpClient, teamA } from '../test-support/fixtures.js';
import { createDb } from '@capstan/db';

const POLICY = `
p, role:team-b-viewer, applications, get, team-b/*, allow
g, viewer-b, role:team-b-viewer
p, role:team-a-viewer, applications, get, team-a/*, allow
g, viewer-a, role:team-a-viewer
`;

const VIEWS = [
  ['resource tree', '/api/v1/applications/guestbook/resource-tree'],
  ['events', '/api/v1/applications/guestbook/events?resourceName=guestbook-ui&resourceNamespace=team-a-prod'],
  ['sync explanation', '/api/v1/applications/guestbook/sync-explanation'],
] as const;

describe("api: the RBAC of an Application's resource tree, events and sync explanation", () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let http: ReturnType<typeof httpClient>;
  let admin: string;
  let viewerA: string;
  let viewerB: string;

  beforeAll(async () => {
    h = await startHarness({ 'rbac.policy-csv': POLICY });
    c = h.clients();
    http = httpClient(h);
    admin = await h.login('admin', ADMIN_PASSWORD);
    await unary(
      c.projects.create.bind(c.projects),
      { project: apiv1.Project.fromJSON(teamA), upsert: false },
      { metadata: bearer(admin) },
    );
    await unary(
      c.applications.create.bind(c.applications),
      { application: apiv1.Application.fromJSON(guestbook('team-a')), upsert: false },
      { metadata: bearer(admin) },
    );
    for (const name of ['viewer-a', 'viewer-b'])
      expect(
        (await http('POST', '/api/v1/account', admin, { name, password: `${name}-password-1` })).status,
      ).toBe(200);
    viewerA = await h.login('viewer-a', 'viewer-a-password-1');
    viewerB = await h.login('viewer-b', 'viewer-b-password-1');
  });
  afterAll(async () => h?.stop());

  const denials = async () => {
    await h.api.services.authz.flush();
    const db = createDb(h.db.url);
    try {
      const rows = await sql<{ object: string; reason: string }>`
        select object, reason from audit.access_decisions
         where subject = 'user:viewer-b' and resource = 'applications' and action = 'get'
           and decision = 'deny' order by id`.execute(db);
      return rows.rows;
    } finally {
      await db.destroy();
    }
  };

  it.each(VIEWS)(
    'refuses the %s to a caller without applications, get on team-a, and audits it',
    async (_, path) => {
      const before = (await denials()).length;
      const res = await http('GET', path, viewerB);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('PERMISSION_DENIED');
      expect(res.body.message).toBe('permission denied: applications, get, team-a/guestbook (viewer-b)');
      const after = await denials();
      expect(after).toHaveLength(before + 1);
      expect(after.at(-1)!.object).toBe('team-a/guestbook');
    },
  );

  it.each(VIEWS)('lets a caller with applications, get on team-a past RBAC to the %s', async (_, path) => {
    for (const token of [viewerA, admin]) {
      const res = await http('GET', path, token);
      expect(res.status).toBe(503);
      expect(res.body.message).toBe('the sync service is not configured (sync.address)');
    }
  });

  it('refuses a missing Application as a forbidden one, over gRPC too', async () => {
    const missing = await http('GET', '/api/v1/applications/nope/resource-tree', viewerB);
    expect(missing.status).toBe(403);
    expect(missing.body.message).toBe('permission denied: applications, get, */nope (viewer-b)');
    const err = await grpcError(
      unary(
        c.applications.explainSync.bind(c.applications),
        apiv1.ApplicationQuery.fromPartial({ name: 'guestbook' }),
        { metadata: bearer(viewerB) },
      ),
    );
    expect(err.code).toBe(status.PERMISSION_DENIED);
    expect(err.details).toBe('permission denied: applications, get, team-a/guestbook (viewer-b)');
    expect((await denials()).map((d) => d.object)).toEqual(expect.arrayContaining(['*/nope']));
  });
});
