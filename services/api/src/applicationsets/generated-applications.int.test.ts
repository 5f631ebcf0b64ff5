// ApplicationSetWritesService and DelegationService on the real api (gRPC over mutual TLS,
// PostgreSQL): only the appset service, acting with a delegation, may call them; generated
// Applications are decided all together (RBAC per project, the project's rules, ownership) and
// written all or nothing; every decision is audited with the set and both identities.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import type { Metadata } from '@grpc/grpc-js';
import { apiv1 } from '@capstan/proto';
import {
  ADMIN_PASSWORD,
  APPSET_TOKEN,
  SYNC_TOKEN,
  bearer,
  startHarness,
  unary,
  type Harness,
} from '../test-support/harness.js';
import { grpcError, httpClient } from '../test-support/fixtures.js';

const SERVER = 'https://kubernetes.default.svc';

const project = (name: string) => ({
  metadata: { name },
  spec: {
    sourceRepos: [`https://git.example.com/${name}/*`],
    destinations: [{ server: SERVER, namespace: `${name}-*` }],
    roles: [
      {
        name: 'dev',
        policies: [
          `p, proj:${name}:dev, applications, *, ${name}/*, allow`,
          `p, proj:${name}:dev, repositories, get, ${name}/*, allow`,
          `p, proj:${name}:dev, clusters, get, ${name}/*, allow`,
        ],
        groups: [`tenant-${name}`],
      },
    ],
  },
});

const app = (name: string, proj: string, destNamespace = `${proj}-prod`) =>
  JSON.stringify({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name, namespace: 'argocd' },
    spec: {
      project: proj,
      source: { repoURL: `https://git.example.com/${proj}/apps.git`, path: name, targetRevision: 'HEAD' },
      destination: { server: SERVER, namespace: destNamespace },
    },
  });

let h: Harness;
let http: ReturnType<typeof httpClient>;
let admin: string;
const mint = () => h.api.services.delegations;
const person = (name: string) => ({ name, groups: [], kind: 'user' as const });

function md(token: string, delegation?: string): Metadata {
  const m = bearer(token);
  if (delegation) m.set('capstan-delegation', delegation);
  return m;
}

/** The appset service acting for `user` (a delegation the api minted for holder appset). */
async function asAppset(user: string): Promise<Metadata> {
  return md(APPSET_TOKEN, (await mint().forRequest(person(user), 'appset', 'api'))!);
}

function applyAs(meta: Metadata, req: Partial<apiv1.ApplyGeneratedRequest>) {
  const c = h.serviceClients('appset').applicationSetWrites;
  return unary(c.apply.bind(c), apiv1.ApplyGeneratedRequest.fromPartial(req), { metadata: meta });
}

async function stored(name: string) {
  const res = await http('GET', `/api/v1/applications/${name}`, admin);
  return res.status === 200 ? res.body : undefined;
}

async function auditRows(): Promise<{ subject: string; object: string; decision: string; reason: string }[]> {
  await h.api.services.authz.flush();
  return (await h.api.services.db
    .withSchema('audit')
    .selectFrom('access_decisions' as never)
    .select(['subject', 'object', 'decision', 'reason'] as never)
    .orderBy('id' as never)
    .execute()) as never;
}

beforeAll(async () => {
  h = await startHarness();
  http = httpClient(h);
  admin = await h.login('admin', ADMIN_PASSWORD);
  for (const name of ['team-a', 'team-b']) {
    const res = await http('POST', '/api/v1/projects', admin, { project: project(name) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  for (const [user, groups] of [
    ['alice', ['tenant-team-a']],
    ['bob', ['tenant-team-b']],
    ['carol', []],
  ] as const) {
    const res = await http('POST', '/api/v1/account', admin, {
      name: user,
      password: `${user}-password`,
      groups,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
});
afterAll(async () => h?.stop());

describe('Apply: generated Applications, all or nothing', () => {
  it('creates what the user may create, owned by the set, audited with the set and both identities', async () => {
    const res = await applyAs(await asAppset('alice'), {
      applicationSet: 'argocd/set-a',
      applicationsJson: [app('a-one', 'team-a'), app('a-two', 'team-a')],
      allowUpdate: true,
    });
    expect(res.applied).toBe(true);
    expect(res.applications.map((v) => [v.name, v.action, v.allowed])).toEqual([
      ['a-one', 'create', true],
      ['a-two', 'create', true],
    ]);
    expect(res.applications[0]!.reason).toContain('proj:team-a:dev, applications, *, team-a/*, allow');
    const one = await stored('a-one');
    expect(one.spec.project).toBe('team-a');
    const manifest = (
      await h.api.services.db
        .withSchema('api')
        .selectFrom('applications')
        .select('manifest')
        .where('name', '=', 'a-one')
        .executeTakeFirstOrThrow()
    ).manifest as { metadata: { ownerReferences: unknown } };
    expect(manifest.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'ApplicationSet',
        name: 'set-a',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    const rows = (await auditRows()).filter(
      (r) => r.object === 'team-a/a-one' && r.subject === 'user:alice via service:appset',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.decision).toBe('allow');
    expect(rows[0]!.reason).toContain('applicationset argocd/set-a: create');
  });

  it('refuses the whole set when one Application crosses into another tenant or breaks its project, naming each', async () => {
    const res = await applyAs(await asAppset('alice'), {
      applicationSet: 'argocd/set-a',
      applicationsJson: [
        app('a-one', 'team-a'),
        app('a-two', 'team-a'),
        app('a-three', 'team-a'),
        app('a-system', 'team-a', 'kube-system'),
        app('into-b', 'team-b'),
      ],
      allowUpdate: true,
    });
    expect(res.applied).toBe(false);
    const byName = Object.fromEntries(res.applications.map((v) => [v.name, v]));
    expect(byName['a-three']).toMatchObject({ action: 'create', allowed: true });
    expect(byName['into-b']).toMatchObject({ action: 'create', allowed: false, project: 'team-b' });
    expect(byName['into-b']!.reason).toContain('permission denied: applications, create, team-b/into-b');
    expect(byName['a-system']).toMatchObject({ allowed: false });
    expect(byName['a-system']!.reason).toContain('spec.destination');
    // Nothing was written, not even the allowed new one.
    expect(await stored('a-three')).toBeUndefined();
    expect(await stored('into-b')).toBeUndefined();
    const denied = (await auditRows()).filter((r) => r.object === 'team-b/into-b');
    expect(denied.at(-1)).toMatchObject({ decision: 'deny', subject: 'user:alice via service:appset' });
  });

  it('writes nothing for unchanged Applications, and create-only leaves existing ones as they are', async () => {
    const before = await stored('a-one');
    const same = await applyAs(await asAppset('alice'), {
      applicationSet: 'argocd/set-a',
      applicationsJson: [app('a-one', 'team-a'), app('a-two', 'team-a')],
      allowUpdate: true,
    });
    expect(same.applied).toBe(true);
    expect(same.applications.map((v) => v.action)).toEqual(['unchanged', 'unchanged']);
    const createOnly = await applyAs(await asAppset('alice'), {
      applicationSet: 'argocd/set-a',
      applicationsJson: [app('a-one', 'team-a', 'team-a-staging'), app('a-two', 'team-a')],
      allowUpdate: false,
    });
    expect(createOnly.applications.map((v) => v.action)).toEqual(['unchanged', 'unchanged']);
    const after = await stored('a-one');
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec.destination.namespace).toBe('team-a-prod');
  });

  it("never takes over an Application it does not own (Argo CD's error)", async () => {
    const direct = await http('POST', '/api/v1/applications', admin, {
      application: JSON.parse(app('b-direct', 'team-b')),
    });
    expect(direct.status, JSON.stringify(direct.body)).toBe(200);
    const res = await applyAs(await asAppset('bob'), {
      applicationSet: 'argocd/set-b',
      applicationsJson: [app('b-direct', 'team-b'), app('a-one', 'team-b')],
      allowUpdate: true,
    });
    expect(res.applied).toBe(false);
    const byName = Object.fromEntries(res.applications.map((v) => [v.name, v]));
    expect(byName['a-one']!.reason).toBe(
      'Object argocd/a-one is already owned by another ApplicationSet controller set-a',
    );
    expect(byName['b-direct']!.reason).toBe(
      'Object argocd/b-direct already exists and is not owned by ApplicationSet set-b',
    );
    expect((await stored('a-one')).spec.project).toBe('team-a');
  });

  it('keeps ownership when a user edits an owned Application directly', async () => {
    const edited = JSON.parse(app('a-two', 'team-a'));
    edited.spec.source.path = 'edited';
    const res = await http('POST', '/api/v1/applications', admin, { application: edited, upsert: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const again = await applyAs(await asAppset('alice'), {
      applicationSet: 'argocd/set-a',
      applicationsJson: [app('a-one', 'team-a'), app('a-two', 'team-a')],
      allowUpdate: true,
    });
    expect(again.applications.map((v) => [v.name, v.action, v.allowed])).toEqual([
      ['a-one', 'unchanged', true],
      ['a-two', 'update', true],
    ]);
    expect((await stored('a-two')).spec.source.path).toBe('a-two');
  });

  it('deletes owned Applications no longer generated (delete_missing), without cascade when preserved', async () => {
    const res = await applyAs(await asAppset('alice'), {
      applicationSet: 'argocd/set-a',
      applicationsJson: [app('a-one', 'team-a')],
      allowUpdate: true,
      deleteMissing: true,
      preserveResources: true,
    });
    expect(res.applied).toBe(true);
    expect(res.applications.map((v) => [v.name, v.action])).toEqual([
      ['a-one', 'unchanged'],
      ['a-two', 'delete'],
    ]);
    expect(await stored('a-two')).toBeUndefined();
    const deleted = (await h.api.services.db
      .withSchema('api')
      .selectFrom('events' as never)
      .select('envelope' as never)
      .where('stream_id' as never, '=', 'applications/argocd/a-two' as never)
      .where('type' as never, '=', 'io.capstan.application.deleted.v1' as never)
      .executeTakeFirstOrThrow()) as { envelope: { data: { cascade: boolean } } };
    expect(deleted.envelope.data.cascade).toBe(false);
  });

  it('writes creates, updates and deletes of one request together, each Application with its own event and outbox row', async () => {
    const alice = await asAppset('alice');
    const first = await applyAs(alice, {
      applicationSet: 'argocd/set-w',
      applicationsJson: [app('w-one', 'team-a'), app('w-two', 'team-a')],
      allowUpdate: true,
    });
    expect(first.applied).toBe(true);
    const res = await applyAs(alice, {
      applicationSet: 'argocd/set-w',
      applicationsJson: [app('w-one', 'team-a', 'team-a-staging'), app('w-three', 'team-a')],
      allowUpdate: true,
      deleteMissing: true,
    });
    expect(res.applied).toBe(true);
    expect(res.applications.map((v) => [v.name, v.action])).toEqual([
      ['w-one', 'update'],
      ['w-three', 'create'],
      ['w-two', 'delete'],
    ]);
    const events = (await h.api.services.db
      .withSchema('api')
      .selectFrom('events' as never)
      .select(['stream_id', 'version', 'event_id', 'envelope'] as never)
      .where('stream_id' as never, 'like', 'applications/argocd/w-%' as never)
      .orderBy('stream_id' as never)
      .orderBy('version' as never)
      .execute()) as {
      stream_id: string;
      version: number;
      event_id: string;
      envelope: { type: string; actor: string; sequence: number };
    }[];
    expect(events.map((e) => [e.stream_id, e.version, e.envelope.sequence, e.envelope.type])).toEqual([
      ['applications/argocd/w-one', 1, 1, 'io.capstan.application.created.v1'],
      ['applications/argocd/w-one', 2, 2, 'io.capstan.application.updated.v1'],
      ['applications/argocd/w-three', 1, 1, 'io.capstan.application.created.v1'],
      ['applications/argocd/w-two', 1, 1, 'io.capstan.application.created.v1'],
      // Not preserved: the deletion cascades (the sync service removes it once its resources are gone).
      ['applications/argocd/w-two', 2, 2, 'io.capstan.application.deletion-requested.v1'],
    ]);
    expect(new Set(events.map((e) => e.envelope.actor))).toEqual(new Set(['user:alice via service:appset']));
    const outbox = (await h.api.services.db
      .withSchema('api')
      .selectFrom('outbox' as never)
      .select('event_id' as never)
      .where('event_id' as never, 'in', events.map((e) => e.event_id) as never)
      .execute()) as { event_id: string }[];
    // The relay may have published (and removed) some already; none is queued twice.
    expect(new Set(outbox.map((o) => o.event_id)).size).toBe(outbox.length);
    expect((await stored('w-one')).spec.destination.namespace).toBe('team-a-staging');
    expect(await stored('w-three')).toBeDefined();
    expect((await stored('w-two')).metadata.deletionTimestamp).toEqual(expect.any(String));
  });

  it('deletes every owned Application when the set is deleted, only with delete rights on each', async () => {
    const bobs = await applyAs(await asAppset('bob'), { applicationSet: 'argocd/set-a', deleteAll: true });
    expect(bobs.applied).toBe(false);
    expect(bobs.applications).toMatchObject([{ name: 'a-one', action: 'delete', allowed: false }]);
    expect(await stored('a-one')).toBeDefined();
    const res = await applyAs(await asAppset('alice'), { applicationSet: 'argocd/set-a', deleteAll: true });
    expect(res.applied).toBe(true);
    expect(res.applications).toMatchObject([{ name: 'a-one', action: 'delete', allowed: true }]);
    // Not preserved: the deletion cascades, so the Application stays (deleting) until the sync
    // service has deleted its resources (there is none in this test).
    expect(await stored('a-one')).toMatchObject({
      metadata: {
        finalizers: ['resources-finalizer.argocd.argoproj.io'],
        deletionTimestamp: expect.any(String),
      },
    });
  });

  it('refuses Applications outside the set namespace or with bad fields, naming each path', async () => {
    const outside = JSON.parse(app('x', 'team-a'));
    outside.metadata.namespace = 'other';
    const e = await grpcError(
      applyAs(await asAppset('alice'), {
        applicationSet: 'argocd/set-c',
        applicationsJson: [JSON.stringify(outside), '{"metadata":{"name":"y"}}', 'not json'],
      }),
    );
    expect(e.code).toBe(status.INVALID_ARGUMENT);
    expect(e.details).toContain('applications_json[0].metadata.namespace');
    expect(e.details).toContain('applications_json[1].spec');
    expect(e.details).toContain('applications_json[2]');
  });
});

describe('CheckInputs: before generating', () => {
  const check = async (user: string, req: Partial<apiv1.CheckInputsRequest>) => {
    const c = h.serviceClients('appset').applicationSetWrites;
    return unary(
      c.checkInputs.bind(c),
      apiv1.CheckInputsRequest.fromPartial({ applicationSet: 'argocd/set-x', ...req }),
      {
        metadata: await asAppset(user),
      },
    );
  };

  it("allows the tenant's own repositories, refuses another tenant's and names it", async () => {
    expect(await check('alice', { repoUrls: ['https://git.example.com/team-a/apps.git'] })).toEqual({
      allowed: true,
      reason: '',
    });
    const refused = await check('alice', {
      repoUrls: ['https://git.example.com/team-a/apps.git', 'https://git.example.com/team-b/apps.git'],
    });
    expect(refused.allowed).toBe(false);
    expect(refused.reason).toContain('repositories, get, https://git.example.com/team-b/apps.git');
    expect(refused.reason).not.toContain('team-a/apps');
  });

  it('refuses a user who may create no Application at all, and one who may get no cluster', async () => {
    const carol = await check('carol', {});
    expect(carol.allowed).toBe(false);
    expect(carol.reason).toContain('no project in which the caller may create an Application');
    const clusters = await check('bob', { readsClusters: true });
    expect(clusters).toMatchObject({ allowed: false });
    expect(clusters.reason).toContain('clusters, get');
    const rows = (await auditRows()).filter((r) =>
      r.reason.includes('applicationset argocd/set-x: before generating'),
    );
    expect(rows.some((r) => r.subject === 'user:carol via service:appset' && r.decision === 'deny')).toBe(
      true,
    );
  });
});

describe('only the appset service, with a delegation, may call the internal services', () => {
  it("refuses sync's token (even with a delegation for sync), appset without a delegation, and users", async () => {
    const req = { applicationSet: 'argocd/set-z', applicationsJson: [app('z', 'team-a')] };
    const forSync = (await mint().forRequest(person('alice'), 'sync', 'api'))!;
    const sync = h.serviceClients('sync').applicationSetWrites;
    const asSync = await grpcError(
      unary(sync.apply.bind(sync), apiv1.ApplyGeneratedRequest.fromPartial(req), {
        metadata: md(SYNC_TOKEN, forSync),
      }),
    );
    expect(asSync.code).toBe(status.PERMISSION_DENIED);
    const bare = await grpcError(applyAs(md(APPSET_TOKEN), req));
    expect(bare.code).toBe(status.PERMISSION_DENIED);
    expect(bare.details).toContain('delegation');
    const alice = await h.login('alice', 'alice-password');
    const user = h.clients().applicationSetWrites;
    const asUser = await grpcError(
      unary(user.apply.bind(user), apiv1.ApplyGeneratedRequest.fromPartial(req), { metadata: md(alice) }),
    );
    expect(asUser.code).toBe(status.PERMISSION_DENIED);
    expect(await stored('z')).toBeUndefined();
  });

  it('records an owner from a user delegation, then issues owner delegations good for that set only', async () => {
    const d = h.serviceClients('appset').delegation;
    const resource = 'applicationsets/argocd/set-o';
    // The appset service alone cannot name an owner.
    expect(
      (await grpcError(unary(d.recordOwner.bind(d), { resource }, { metadata: md(APPSET_TOKEN) }))).code,
    ).toBe(status.PERMISSION_DENIED);
    expect(
      (
        await grpcError(
          unary(
            d.issueOwnerDelegation.bind(d),
            { resource, audience: 'api' },
            { metadata: md(APPSET_TOKEN) },
          ),
        )
      ).code,
    ).toBe(status.PERMISSION_DENIED);
    const recorded = await unary(d.recordOwner.bind(d), { resource }, { metadata: await asAppset('alice') });
    expect(recorded.owner).toBe('alice');
    const issued = await unary(
      d.issueOwnerDelegation.bind(d),
      { resource, audience: 'api' },
      { metadata: md(APPSET_TOKEN) },
    );
    expect(issued.owner).toBe('alice');
    const ok = await applyAs(md(APPSET_TOKEN, issued.delegation), {
      applicationSet: 'argocd/set-o',
      applicationsJson: [app('o-one', 'team-a')],
    });
    expect(ok.applied).toBe(true);
    const rows = (await auditRows()).filter((r) => r.object === 'team-a/o-one');
    expect(rows[0]!.subject).toBe('user:alice via service:appset as owner of applicationsets/argocd/set-o');
    // A background reconcile that changes nothing decides nothing: no RBAC check, no audit row.
    const again = await applyAs(md(APPSET_TOKEN, issued.delegation), {
      applicationSet: 'argocd/set-o',
      applicationsJson: [app('o-one', 'team-a')],
    });
    expect(again.applications).toMatchObject([{ name: 'o-one', action: 'unchanged', allowed: true }]);
    expect((await auditRows()).filter((r) => r.object === 'team-a/o-one')).toHaveLength(rows.length);
    const other = await grpcError(
      applyAs(md(APPSET_TOKEN, issued.delegation), {
        applicationSet: 'argocd/set-a',
        applicationsJson: [app('o-two', 'team-a')],
      }),
    );
    expect(other.code).toBe(status.PERMISSION_DENIED);
  });

  it("refuses an owner delegation once the owner's account is disabled", async () => {
    await h.api.services.db
      .withSchema('api')
      .updateTable('accounts')
      .set({ enabled: false })
      .where('name', '=', 'alice')
      .execute();
    h.api.services.authn.forgetAccount('alice');
    const d = h.serviceClients('appset').delegation;
    const e = await grpcError(
      unary(
        d.issueOwnerDelegation.bind(d),
        { resource: 'applicationsets/argocd/set-o', audience: 'api' },
        { metadata: md(APPSET_TOKEN) },
      ),
    );
    expect(e.code).toBe(status.PERMISSION_DENIED);
    expect(e.details).toContain('disabled');
  });
});
