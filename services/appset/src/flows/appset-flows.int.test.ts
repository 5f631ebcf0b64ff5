// The flows on the real PostgreSQL and NATS, through the real gRPC server: what Upsert stores and
// publishes, what a refusal or bad input leaves (nothing), update and delete, and the reconciler
// (a regeneration with no change writes nothing; an owner who lost a right leaves the Applications
// untouched and the status says why; a trigger on the bus makes a set due).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { status, type ServiceError } from '@grpc/grpc-js';
import { connectBus, gitPush, newEvent, type Bus } from '@capstan/events';
import { fieldViolationsOf, type appsetv1 } from '@capstan/proto';
import pg from 'pg';
import { startHarness, type Harness } from '../test-support/harness.js';

let h: Harness;
let db: pg.Client;
beforeAll(async () => {
  h = await startHarness({ CAPSTAN_RECONCILE_TICK_MS: '200' });
  db = new pg.Client({ connectionString: h.tdb.url });
  await db.connect();
}, 120_000);
afterAll(async () => {
  await db?.end();
  await h?.stop();
});

const delegations = { api: 'caller-api', repo: 'caller-repo' };
const manifest = (
  name: string,
  opts: {
    elements?: Record<string, string>[];
    project?: string;
    labels?: Record<string, string>;
    extra?: Record<string, unknown>;
  } = {},
) =>
  JSON.stringify({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name, ...(opts.labels ? { labels: opts.labels } : {}) },
    spec: {
      generators: [{ list: { elements: opts.elements ?? [{ cluster: 'dev' }, { cluster: 'prod' }] } }],
      template: {
        metadata: { name: `{{cluster}}-${name}` },
        spec: {
          project: opts.project ?? 'team-a',
          source: {
            repoURL: 'https://git.example.com/team-a/apps.git',
            path: 'guestbook',
            targetRevision: 'HEAD',
          },
          destination: { server: 'https://kubernetes.default.svc', namespace: 'team-a-{{cluster}}' },
        },
      },
      ...opts.extra,
    },
  });

const upsert = (manifestJson: string, o: { upsert?: boolean; dryRun?: boolean } = {}) =>
  h.call((c) => c.upsert, {
    manifestJson,
    upsert: o.upsert ?? false,
    dryRun: o.dryRun ?? false,
    delegations,
  }) as Promise<appsetv1.ApplicationSetResult>;

const events = async (name: string) =>
  (
    await db.query(`select type, envelope from appset.events where stream_id = $1 order by version`, [
      `applicationsets/argocd/${name}`,
    ])
  ).rows as {
    type: string;
    envelope: { actor: string; data: Record<string, unknown> };
  }[];

describe('Upsert', () => {
  it('stores the set, records the owner, applies the Applications as the caller and reports Argo CD status', async () => {
    const res = await upsert(manifest('guestbook', { labels: { team: 'a' } }));
    const set = JSON.parse(res.applicationSetJson) as {
      metadata: { uid: string };
      status: { conditions: { type: string; status: string }[]; resources: { name: string }[] };
    };
    expect(set.metadata.uid).toMatch(/[0-9a-f-]{36}/);
    expect(set.status.conditions.map((c) => `${c.type}=${c.status}`)).toEqual([
      'ParametersGenerated=True',
      'ResourcesUpToDate=True',
      'ErrorOccurred=False',
    ]);
    expect(set.status.resources.map((r) => r.name)).toEqual(['dev-guestbook', 'prod-guestbook']);
    expect(res.applications.map((a) => `${a.name}:${a.action}:${a.allowed}`)).toEqual([
      'dev-guestbook:create:true',
      'prod-guestbook:create:true',
    ]);
    // Checked before generating, dry run before anything is stored, then for real, all with the caller's delegation.
    const calls = h.api.calls
      .filter((c) => c.delegation === 'caller-api')
      .map((c) => c.method + ((c.request as { dryRun?: boolean })?.dryRun ? '(dry)' : ''));
    expect(calls).toEqual(['checkInputs', 'apply(dry)', 'recordOwner', 'apply']);
    expect(h.api.owners.get('applicationsets/argocd/guestbook')).toBe('caller-api');
    const stored = await events('guestbook');
    expect(stored.map((e) => e.type)).toEqual([
      'io.capstan.applicationset.created.v1',
      'io.capstan.applicationset.status-changed.v1',
    ]);
    expect(stored[0]!.envelope.actor).toBe('user:alice via service:api');
  });

  it('publishes the events on the bus (outbox relay)', async () => {
    const bus: Bus = await connectBus({ ...h.tbus.connection('admin'), service: 'test' });
    try {
      const info = await bus.jsm.streams.info(`${h.tbus.namespace}_EVT`.toUpperCase());
      const subjects: string[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
        const m = await bus.jsm.streams.getMessage(info.config.name, { seq }).catch(() => undefined);
        if (m) subjects.push(m.subject);
      }
      expect(subjects).toEqual(
        expect.arrayContaining([
          `${h.tbus.namespace}.evt.applicationset.created`,
          `${h.tbus.namespace}.evt.applicationset.status-changed`,
        ]),
      );
    } finally {
      await bus.close();
    }
  });

  it("refuses a different set without upsert with Argo CD's message, and updates it with upsert", async () => {
    await expect(upsert(manifest('guestbook', { elements: [{ cluster: 'dev' }] }))).rejects.toMatchObject({
      code: status.ALREADY_EXISTS,
      details: 'existing ApplicationSet spec is different, use upsert flag to force update',
    });
    const before = (await events('guestbook')).length;
    const res = await upsert(
      manifest('guestbook', { elements: [{ cluster: 'dev' }], labels: { team: 'a' } }),
      { upsert: true },
    );
    expect(res.applications.map((a) => `${a.name}:${a.action}`)).toEqual([
      'dev-guestbook:unchanged',
      'prod-guestbook:delete',
    ]);
    const after = await events('guestbook');
    expect(after.slice(before).map((e) => e.type)).toEqual([
      'io.capstan.applicationset.updated.v1',
      'io.capstan.applicationset.status-changed.v1',
    ]);
    expect(after[before]!.envelope.data.changed).toEqual(['spec.generators']);
  });

  it('stores nothing when the api refuses an Application, and returns each verdict', async () => {
    h.api.deniedProjects = new Set(['team-b']);
    try {
      const res = await upsert(manifest('tenant-b', { project: 'team-b' }));
      expect(res.applications.every((a) => !a.allowed && a.reason.includes('permission denied'))).toBe(true);
      expect(await events('tenant-b')).toEqual([]);
      await expect(h.call((c) => c.get, { name: 'tenant-b', namespace: '' })).rejects.toMatchObject({
        code: status.NOT_FOUND,
      });
    } finally {
      h.api.deniedProjects = new Set();
    }
  });

  it('refuses an update by a caller without rights over every Application the set owns today', async () => {
    const keep = { syncPolicy: { applicationsSync: 'create-only' } };
    await upsert(manifest('owned', { extra: keep }));
    const before = await events('owned');
    h.api.deniedProjects = new Set(['team-a']);
    try {
      // The new version generates only Applications of team-c, which the caller may write; under
      // create-only nothing owned would even be touched. Still: no rights over what it owns, no update.
      const res = await upsert(
        manifest('owned', { project: 'team-c', elements: [{ cluster: 'x' }], extra: keep }),
        {
          upsert: true,
        },
      );
      expect(res.applications.map((a) => `${a.name}:${a.action}:${a.allowed}`)).toEqual([
        'dev-owned:delete:false',
        'prod-owned:delete:false',
      ]);
    } finally {
      h.api.deniedProjects = new Set();
    }
    expect(await events('owned')).toEqual(before);
    expect(h.api.owned.get('argocd/owned')?.size).toBe(2);
  });

  it('stores nothing for a dry run', async () => {
    const res = await upsert(manifest('dry'), { dryRun: true });
    expect(res.applications).toHaveLength(2);
    expect(await events('dry')).toEqual([]);
  });

  it('refuses bad input with field paths and stores nothing', async () => {
    const bad = JSON.stringify({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'ApplicationSet',
      metadata: { name: 'bad' },
      spec: { generators: [{ lists: {} }], template: { metadata: { name: 'x' }, spec: {} } },
    });
    const err = (await upsert(bad).catch((e: unknown) => e)) as ServiceError;
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(fieldViolationsOf(err).map((v) => v.field)).toContain('spec.generators[0].lists');
    const dup = (await upsert(manifest('dup', { elements: [{ cluster: 'a' }, { cluster: 'a' }] })).catch(
      (e: unknown) => e,
    )) as ServiceError;
    expect(dup.code).toBe(status.INVALID_ARGUMENT);
    expect(dup.details).toContain('ApplicationSet dup contains applications with duplicate name: a-dup');
    expect(await events('bad')).toEqual([]);
    expect(await events('dup')).toEqual([]);
  });
});

describe('Get, List, Generate, Delete', () => {
  it('lists by namespace and label selector', async () => {
    await upsert(manifest('other', { labels: { team: 'b' } }));
    const names = async (selector: string) =>
      (
        (await h.call((c) => c.list, { namespace: 'argocd', selector })) as appsetv1.ListResponse
      ).applicationSetsJson.map((j) => (JSON.parse(j) as { metadata: { name: string } }).metadata.name);
    expect(await names('')).toEqual(['guestbook', 'other', 'owned']);
    expect(await names('team=b')).toEqual(['other']);
    expect(await names('team notin (b)')).toEqual(['guestbook', 'owned']);
    expect(await names('team')).toEqual(['guestbook', 'other']);
  });

  it('generates without writing anything', async () => {
    const before = h.api.count('apply', (c) => !(c.request as { dryRun: boolean }).dryRun);
    const res = (await h.call((c) => c.generate, {
      manifestJson: manifest('preview'),
      delegations,
    })) as appsetv1.ApplicationSetResult;
    expect(res.applications.map((a) => a.name)).toEqual(['dev-preview', 'prod-preview']);
    expect(JSON.parse(res.applications[0]!.applicationJson)).toMatchObject({
      kind: 'Application',
      spec: { project: 'team-a' },
    });
    expect(h.api.count('apply', (c) => !(c.request as { dryRun: boolean }).dryRun)).toBe(before);
    expect(await events('preview')).toEqual([]);
  });

  it('refuses a delete when the caller may not delete every owned Application, then deletes', async () => {
    h.api.deniedProjects = new Set(['team-a']);
    await expect(
      h.call((c) => c.delete, { name: 'other', namespace: '', delegations }),
    ).rejects.toMatchObject({
      code: status.PERMISSION_DENIED,
    });
    h.api.deniedProjects = new Set();
    expect((await events('other')).at(-1)!.type).toBe('io.capstan.applicationset.status-changed.v1');
    const res = (await h.call((c) => c.delete, {
      name: 'other',
      namespace: '',
      delegations,
    })) as appsetv1.DeleteResponse;
    expect(res.applications.map((a) => `${a.name}:${a.action}`)).toEqual([
      'dev-other:delete',
      'prod-other:delete',
    ]);
    expect(h.api.owned.get('argocd/other')?.size).toBe(0);
    expect((await events('other')).at(-1)).toMatchObject({
      type: 'io.capstan.applicationset.deleted.v1',
      envelope: { data: { preserveResources: false } },
    });
    await expect(h.call((c) => c.get, { name: 'other', namespace: '' })).rejects.toMatchObject({
      code: status.NOT_FOUND,
    });
  });
});

describe('reconciler', () => {
  it('writes nothing when a regeneration produces what was last applied', async () => {
    const applies = h.api.count('apply');
    const before = (await events('guestbook')).length;
    expect(await h.handles.reconciler.reconcile({ namespace: 'argocd', name: 'guestbook' })).toBe(
      'unchanged',
    );
    expect(h.api.count('apply')).toBe(applies);
    expect((await events('guestbook')).length).toBe(before);
    // It acted as the owner, with owner delegations for api and repo.
    const last = h.api.calls.at(-1)!;
    expect(last.method).toBe('checkInputs');
    const claims = JSON.parse(Buffer.from(last.delegation!.split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(claims).toMatchObject({
      kind: 'owner',
      aud: 'api',
      hld: 'appset',
      res: 'applicationsets/argocd/guestbook',
    });
  });

  it('does not regenerate a set whose inputs did not change, and regenerates when the cluster registry does', async () => {
    const fleet = JSON.stringify({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'ApplicationSet',
      metadata: { name: 'fleet' },
      spec: {
        generators: [{ clusters: {} }],
        template: {
          metadata: { name: '{{name}}-fleet' },
          spec: {
            project: 'team-a',
            source: {
              repoURL: 'https://git.example.com/team-a/apps.git',
              path: 'fleet',
              targetRevision: 'HEAD',
            },
            destination: { server: '{{server}}', namespace: 'team-a-fleet' },
          },
        },
      },
    });
    await upsert(fleet);
    const key = { namespace: 'argocd', name: 'fleet' };
    const spy = vi.spyOn(h.handles.engine, 'generate');
    const generations = () =>
      spy.mock.calls.filter(
        ([req]) => (req.applicationSet as { metadata: { name: string } }).metadata.name === 'fleet',
      ).length;
    const clusters = h.api.clusters;
    try {
      const listed = h.api.count('listClusters');
      expect(await h.handles.reconciler.reconcile(key)).toBe('unchanged');
      expect(generations()).toBe(0);
      // The registry was listed again (as the owner) to compare it, nothing else was asked.
      expect(h.api.count('listClusters')).toBe(listed + 1);
      h.api.clusters = [...clusters, { name: 'dr', server: 'https://dr.example.com', labels: {} }];
      expect(await h.handles.reconciler.reconcile(key)).toBe('applied');
      expect(generations()).toBe(1);
      expect([...(h.api.owned.get('argocd/fleet')?.keys() ?? [])].sort()).toEqual([
        'dr-fleet',
        'in-cluster-fleet',
        'prod-fleet',
      ]);
      expect(await h.handles.reconciler.reconcile(key)).toBe('unchanged');
      expect(generations()).toBe(1);
    } finally {
      h.api.clusters = clusters;
      spy.mockRestore();
    }
  });

  it('leaves the Applications untouched when the owner lost a right, and says why in the status', async () => {
    const owned = JSON.stringify([...(h.api.owned.get('argocd/guestbook') ?? [])]);
    h.api.ownerRevoked = true;
    try {
      expect(await h.handles.reconciler.reconcile({ namespace: 'argocd', name: 'guestbook' })).toBe('failed');
    } finally {
      h.api.ownerRevoked = false;
    }
    expect(JSON.stringify([...(h.api.owned.get('argocd/guestbook') ?? [])])).toBe(owned);
    const res = (await h.call((c) => c.get, {
      name: 'guestbook',
      namespace: '',
    })) as appsetv1.ApplicationSetResult;
    const conditions = (
      JSON.parse(res.applicationSetJson) as {
        status: { conditions: { type: string; status: string; message: string }[] };
      }
    ).status.conditions;
    expect(conditions.find((c) => c.type === 'ErrorOccurred')).toMatchObject({
      status: 'True',
      message: expect.stringContaining('account disabled'),
    });
    // The next reconcile with the right back applies and clears the error.
    expect(await h.handles.reconciler.reconcile({ namespace: 'argocd', name: 'guestbook' })).toBe('applied');
    expect((await events('guestbook')).at(-1)).toMatchObject({
      type: 'io.capstan.applicationset.status-changed.v1',
      envelope: { actor: 'user:alice via service:appset as owner of applicationsets/argocd/guestbook' },
    });
  });

  it('regenerates a set whose repository receives a push, without anyone calling the api', async () => {
    await db.query(
      `update appset.application_sets set git_repos = '{https://git.example.com/team-a/apps}', next_reconcile_at = now() + interval '1 hour' where name = 'guestbook'`,
    );
    const checks = h.api.count(
      'checkInputs',
      (c) => (c.request as { applicationSet: string }).applicationSet === 'argocd/guestbook',
    );
    const nc = await h.tbus.connect('ext-git');
    const push = newEvent(
      gitPush.type,
      { repoURL: 'https://git.example.com/team-a/apps.git' },
      { source: 'ci/test', subject: 'https://git.example.com/team-a/apps.git', actor: 'system:ci' },
    );
    await nc
      .jetstream()
      .publish(`${h.tbus.namespace}.ext.git.push`, JSON.stringify(push), { msgID: push.id });
    await nc.close();
    await expect
      .poll(
        () =>
          h.api.count(
            'checkInputs',
            (c) => (c.request as { applicationSet: string }).applicationSet === 'argocd/guestbook',
          ),
        { timeout: 20_000 },
      )
      .toBeGreaterThan(checks);
  });
});
