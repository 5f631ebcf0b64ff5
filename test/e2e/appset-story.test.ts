// Story (issue 11): ApplicationSets through the RBAC-checked api, on the real stack. Two tenants
// administer their own projects; alice (user-a) creates a set whose matrix of a list and a git
// directories generator renders Applications into team-a, syncs one to a real kube-apiserver as
// team-a's ServiceAccount, is refused (with every Application named) an edit that moves the set into
// team-b, and watches a git push grow the set without calling the api. Bob (user-b) can neither read,
// change, delete nor preview alice's set, and every refusal is a deny in audit.access_decisions.
// Deleting with preserveResourcesOnDeletion removes the Applications and keeps what they deployed;
// deleting a set without it deletes its Applications with cascade, their objects as the ServiceAccount.
// Every service is its own process (api, repo, appset, sync --enable-impersonation) on real
// PostgreSQL, NATS, a git server and an API server whose audit log says who wrote what.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { effectiveUser, seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { capstan, type ApiProcess, type CliResult } from './api-harness.js';
import { appSet, configMap, eventually, listSet, ok } from './appset-story-fixtures.js';
import { appsetCliChapter } from './appset-cli-steps.js';
import type { AppsetProcess } from './appset-harness.js';
import type { RepoProcess } from './repo-harness.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import type { ServiceProcess } from '../src/infra/index.js';
import { collectForegroundDeletions } from './garbage-collector.js';

const GIT_PASSWORD = `git-${randomBytes(8).toString('hex')}`;
const SA_A = 'system:serviceaccount:team-a-prod:deployer';
const SET = 'argocd/team-a-apps';

describe('appset story: ApplicationSets of two tenants through the RBAC-checked api', () => {
  let cluster: KubeCluster;
  let git: GitServer;
  let appsRepo: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let dir: string;
  let repo: RepoProcess;
  let api: ApiProcess;
  let appset: AppsetProcess;
  let sync: ServiceProcess;
  let plane: ControlPlane;
  let config: string;
  const as = (ctx: string, args: string[], input?: string) =>
    capstan(config, ['--context', ctx, ...args], input);
  const file = async (name: string, content: string) => {
    const p = path.join(dir, name);
    await writeFile(p, content);
    return p;
  };
  const services = () => plane?.output() ?? '';

  beforeAll(async () => {
    cluster = await startCluster({ name: 'appset-story', log: () => {} });
    for (const t of ['a', 'b'])
      await seedTenant(cluster.adminKubeconfig, {
        namespace: `team-${t}-prod`,
        serviceAccounts: ['deployer'],
        rules: [
          {
            apiGroups: [''],
            resources: ['configmaps'],
            verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
          },
        ],
      });
    git = await startGitServer();
    appsRepo = await git.createRepository('team-a/apps.git', {
      credentials: [{ username: 'git', password: GIT_PASSWORD }],
    });
    await appsRepo.commit({
      'apps/guestbook/config.yaml': configMap('guestbook-ui'),
      'apps/billing/config.yaml': configMap('billing-ui'),
    });
    db = await createTestDatabase('capstan_appset_story');
    bus = await createTestBus('appsetstory');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-appset-story-'));
    config = path.join(dir, 'contexts');
    // The test git server publishes no push events: repo's polling detects the new commit.
    plane = await startControlPlane({
      databaseUrl: db.url,
      bus,
      cacheDir: path.join(dir, 'cache'),
      repoEnv: { CAPSTAN_POLL_INTERVAL_MS: '2000' },
      appsetEnv: { CAPSTAN_RECONCILE_TICK_MS: '1000' },
    });
    ({ repo, api, appset, sync } = plane);

    const login = (user: string, password: string) =>
      capstan(
        config,
        ['login', api.grpcAddress, '--username', user, '--password-stdin', '--name', user],
        `${password}\n`,
      );
    ok(await login('admin', api.adminPassword), 'admin login');
    const tokenFile = await file('token', `${cluster.controlPlaneToken}\n`);
    const caFile = await file('ca.pem', cluster.caPem);
    const cluster_ = ['--bearer-token-file', tokenFile, '--ca-file', caFile];
    ok(await as('admin', ['cluster', 'add', cluster.server, '--name', 'story', ...cluster_]), 'cluster add');
    for (const t of ['a', 'b']) {
      const p = `team-${t}`;
      const steps: [string[], string?][] = [
        [
          [
            'proj',
            'create',
            p,
            '--src',
            `${git.baseUrl}/${p}/*`,
            '--dest',
            `${cluster.server},${p}-*`,
            '--dest-service-account',
            `${cluster.server},${p}-prod,deployer`,
          ],
        ],
        [['proj', 'role', 'create', p, 'admin']],
        [['proj', 'role', 'add-policy', p, 'admin', '-a', '*', '-o', '*']],
        [['proj', 'role', 'add-policy', p, 'admin', '-r', 'applicationsets', '-a', '*', '-o', '*']],
        [['proj', 'role', 'add-policy', p, 'admin', '-r', 'repositories', '-a', '*', '-o', '*']],
        [['proj', 'role', 'add-group', p, 'admin', `tenant-${t}`]],
        [
          ['account', 'create', `user-${t}`, '--groups', `tenant-${t}`, '--password-stdin'],
          `${p}-password\n`,
        ],
      ];
      for (const [args, input] of steps) ok(await as('admin', args, input), args.join(' '));
      ok(await login(`user-${t}`, `${p}-password`), `login user-${t}`);
    }
    ok(
      await as(
        'user-a',
        ['repo', 'add', appsRepo.url, '--project', 'team-a', '--username', 'git', '--password-stdin'],
        `${GIT_PASSWORD}\n`,
      ),
      'repo add',
    );
  }, 300_000);

  afterAll(async () => {
    await plane?.stop();
    await git?.close();
    await bus?.cleanup();
    await db?.drop();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The story's set, its template in `project`. */
  const storySet = (project: string) =>
    appSet({
      name: 'team-a-apps',
      project,
      repoURL: appsRepo.url,
      elements: '[{ env: prod }]',
      preserve: true,
    });
  const appNames = async (ctx: string) => {
    const r = await as(ctx, ['app', 'list', '-o', 'name']);
    ok(r, `app list: ${services()}`);
    return r.stdout.split('\n').filter(Boolean).sort();
  };
  const getSet = async (ctx = 'user-a') => {
    const r = await as(ctx, ['appset', 'get', SET, '-o', 'json']);
    ok(r, 'appset get');
    return JSON.parse(r.stdout) as { spec: unknown; status: unknown };
  };

  it('runs every appset command of the CLI against the real server', async () => {
    // A list-only set in its own environment (team-a-staging): the chapter's Applications never meet
    // the story's, and its edit into team-b generates, so the refusal names each Application.
    const elements = `[{ env: staging, app: guestbook }, { env: staging, app: billing }]`;
    await appsetCliChapter({
      cli: (args) => as('user-a', args),
      dir,
      allowed: {
        manifest: listSet({ name: 'chapter', project: 'team-a', repoURL: appsRepo.url, elements }),
        qualifiedName: 'argocd/chapter',
        applications: ['billing-staging', 'guestbook-staging'],
      },
      refused: {
        manifest: listSet({ name: 'chapter', project: 'team-b', repoURL: appsRepo.url, elements }),
        refusedApplications: ['billing-staging', 'guestbook-staging'],
      },
    });
    // Not preserved: the Applications cascade (nothing was synced) and go once the sync service is done.
    await eventually('the chapter Applications removed', async () =>
      (await appNames('admin')).length === 0 ? true : undefined,
    );
  }, 180_000);

  it("generates the tenant's Applications, owned by the set, and syncs one as team-a's ServiceAccount", async () => {
    const manifest = await file('team-a-apps.yaml', storySet('team-a'));
    const created = await as('user-a', ['appset', 'create', manifest]);
    ok(created, `appset create: ${services()}`);
    expect(await appNames('user-a')).toEqual(['billing-prod', 'guestbook-prod']);
    for (const name of ['billing-prod', 'guestbook-prod']) {
      const r = await as('user-a', ['app', 'get', name, '-o', 'json']);
      ok(r, `app get ${name}`);
      const app = JSON.parse(r.stdout) as { metadata: { ownerReferences?: unknown }; spec: unknown };
      expect(app.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'ApplicationSet', name: 'team-a-apps', controller: true }),
      ]);
      expect(app.spec).toMatchObject({
        project: 'team-a',
        source: { path: `apps/${name.split('-')[0]}` },
        destination: { name: 'story', namespace: 'team-a-prod' },
      });
    }
    // The set's status names the Applications it owns (Argo's status.resources).
    const status = (await getSet()).status as { resources: { kind: string; name: string }[] };
    expect(status.resources.map((r) => `${r.kind}/${r.name}`).sort()).toEqual([
      'Application/billing-prod',
      'Application/guestbook-prod',
    ]);

    const since = await cluster.audit.mark();
    const synced = await as('user-a', ['app', 'sync', 'guestbook-prod', '--timeout', '120', '-o', 'json']);
    ok(synced, `app sync: ${sync.output().slice(-3000)}`);
    expect(JSON.parse(synced.stdout)).toMatchObject({ phase: 'Succeeded' });
    const configMaps = await cluster.adminKubeconfig
      .makeApiClient(CoreV1Api)
      .listNamespacedConfigMap({ namespace: 'team-a-prod' });
    expect(configMaps.items.map((c) => c.metadata!.name)).toContain('guestbook-ui');
    const bySync = (await cluster.audit.flush({ since })).filter(
      (e) => e.user.username === cluster.controlPlaneUsername,
    );
    // Every request in team-a-prod is team-a's ServiceAccount; the window may also hold the chapter's
    // clean-up in team-a-staging (its own identity), but never the control plane acting as itself.
    const inProd = bySync.filter((e) => e.objectRef?.namespace === 'team-a-prod');
    expect(inProd.length).toBeGreaterThan(0);
    expect(new Set(inProd.map(effectiveUser))).toEqual(new Set([SA_A]));
    expect(bySync.filter((e) => !e.impersonatedUser).map((e) => e.requestURI)).toEqual([]);
  });

  it('refuses edits that move the set towards team-b, naming each Application, and changes nothing', async () => {
    const before = await getSet();
    const unchanged = async () => {
      expect(await appNames('admin')).toEqual(['billing-prod', 'guestbook-prod']);
      expect((await getSet()).spec).toEqual(before.spec);
      const app = JSON.parse((await as('admin', ['app', 'get', 'billing-prod', '-o', 'json'])).stdout);
      expect(app.spec).toMatchObject({ project: 'team-a', destination: { namespace: 'team-a-prod' } });
    };
    // Into team-b's project: the git generator reads with the template project's credentials, and
    // team-b has none for team-a's repository, so nothing is generated at all.
    const toProject = await file('team-a-apps-to-b.yaml', storySet('team-b'));
    const intoProject = await as('user-a', ['appset', 'apply', toProject]);
    expect(intoProject.code, intoProject.stdout).not.toBe(0);
    expect(intoProject.stderr).toContain(`ApplicationSet ${SET}: INVALID_ARGUMENT: spec.generators[0]`);
    expect(intoProject.stderr).toContain(`authentication to repository ${appsRepo.url}`);
    await unchanged();

    // Into team-b's namespace from team-a's project: generated, and each Application refused by the
    // project rule.
    const toNamespace = await file(
      'team-a-apps-to-b-namespace.yaml',
      storySet('team-a').replace("namespace: 'team-a-{{.env}}'", "namespace: 'team-b-{{.env}}'"),
    );
    const intoNamespace = await as('user-a', ['appset', 'apply', toNamespace]);
    expect(intoNamespace.code, intoNamespace.stdout).not.toBe(0);
    for (const name of ['billing-prod', 'guestbook-prod'])
      expect(intoNamespace.stderr).toMatch(new RegExp(`${name}.*team-b-prod`));
    await unchanged();
  });

  it('generates the Application of a directory pushed to git without anyone calling the api', async () => {
    const sha = await appsRepo.commit({ 'apps/search/config.yaml': configMap('search-ui') });
    const app = await eventually('search-prod to be generated', async () => {
      const r = await as('admin', ['app', 'get', 'search-prod', '-o', 'json']);
      return r.code === 0 ? (JSON.parse(r.stdout) as { spec: { project: string } }) : undefined;
    });
    expect(app.spec.project).toBe('team-a');
    expect(await appNames('user-a')).toEqual(['billing-prod', 'guestbook-prod', 'search-prod']);

    // What fired: the repo service's poll saw the new commit of the watched source and published
    // revision-changed, which appset's trigger consumer took (the test git server sends no pushes).
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const fired = await client.query<{ detected_by: string; consumers: string[] }>(
        `select e.envelope::jsonb->'data'->>'detectedBy' as detected_by,
                array(select p.consumer from appset.processed_events p where p.event_id = e.event_id) as consumers
           from repo.events e
          where e.type = 'io.capstan.repository.revision-changed.v1' and e.envelope::jsonb->'data'->>'sha' = $1`,
        [sha],
      );
      expect(fired.rows).toEqual([{ detected_by: 'poll', consumers: ['appset-triggers'] }]);
    } finally {
      await client.end();
    }
  });

  it("refuses user-b every operation on user-a's set, each a deny in the audit trail", async () => {
    const bob = (args: string[]) => as('user-b', args);
    const setBefore = await getSet();
    const refused = (r: CliResult, what: string) => {
      expect(r.code, `${what}: ${r.stdout}`).not.toBe(0);
      expect(r.stderr, what).toMatch(/PERMISSION_DENIED|NOT_FOUND/);
    };
    refused(await bob(['appset', 'get', SET]), 'get');
    const takeOver = await file(
      'take-over.yaml',
      appSet({ name: 'team-a-apps', project: 'team-a', repoURL: appsRepo.url, elements: '[{ env: evil }]' }),
    );
    // `appset apply` reads the set first and is refused there; the generic apply writes blind and
    // meets the update check.
    refused(await bob(['appset', 'apply', takeOver]), 'appset apply');
    refused(await bob(['apply', '-f', takeOver]), 'update');
    refused(await bob(['appset', 'delete', SET, '--yes']), 'delete');
    expect(JSON.stringify(JSON.parse((await bob(['appset', 'list', '-o', 'json'])).stdout))).not.toContain(
      'team-a-apps',
    );

    // A preview of a set into team-a: every verdict refused, a non-zero exit. (With the git
    // generator bob is refused before generating: team-a's repository is not his to read.)
    refused(await bob(['appset', 'generate', takeOver, '-o', 'json']), 'generate from git');
    const intoA = await file(
      'into-a.yaml',
      listSet({
        name: 'bobs',
        project: 'team-a',
        repoURL: appsRepo.url,
        elements: '[{ env: prod, app: evil }]',
      }),
    );
    const gen = await bob(['appset', 'generate', intoA, '-o', 'json']);
    expect(gen.code, gen.stderr).toBe(1);
    const verdicts = (JSON.parse(gen.stdout) as { verdicts: { allowed: boolean }[] }).verdicts;
    expect(verdicts.length).toBeGreaterThan(0);
    expect(verdicts.every((v) => !v.allowed)).toBe(true);

    expect((await getSet()).spec).toEqual(setBefore.spec);
    expect(await appNames('admin')).toEqual(['billing-prod', 'guestbook-prod', 'search-prod']);

    const audit = await as('admin', [
      'audit',
      'query',
      'access',
      '--user',
      'user-b',
      '--outcome',
      'deny',
      '--limit',
      '500',
      '-o',
      'json',
    ]);
    ok(audit, 'audit query');
    const denies = (JSON.parse(audit.stdout) as { fields: Record<string, string> }[]).map(
      (row) => `${row.fields.resource} ${row.fields.action} ${row.fields.object}`,
    );
    for (const expected of [
      `applicationsets get ${SET}`,
      `applicationsets update ${SET}`,
      `applicationsets delete ${SET}`,
      // The previews: the git generator's repository, then the Application of the list-only set.
      `repositories get ${appsRepo.url}`,
      'applications create team-a/evil-prod',
    ])
      expect(denies, denies.join('; ')).toContain(expected);
  });

  it('deletes the set with its Applications and keeps what they deployed', async () => {
    const del = await as('user-a', ['appset', 'delete', SET, '--yes']);
    ok(del, `appset delete: ${services()}`);
    expect(await appNames('admin')).toEqual([]);
    const gone = await as('user-a', ['appset', 'get', SET]);
    expect(gone.stderr).toMatch(/NOT_FOUND/);
    const configMaps = await cluster.adminKubeconfig
      .makeApiClient(CoreV1Api)
      .listNamespacedConfigMap({ namespace: 'team-a-prod' });
    expect(configMaps.items.map((c) => c.metadata!.name)).toContain('guestbook-ui');
  });

  it('deletes a set without preserveResourcesOnDeletion with its Applications and, as their ServiceAccount, what they deployed', async () => {
    const manifest = await file(
      'team-a-cascade.yaml',
      `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: { name: team-a-cascade, namespace: argocd }
spec:
  goTemplate: true
  generators: [{ list: { elements: [{ app: billing }] } }]
  template:
    metadata: { name: '{{.app}}-cascade' }
    spec:
      project: team-a
      source: { repoURL: '${appsRepo.url}', targetRevision: main, path: 'apps/{{.app}}' }
      destination: { name: story, namespace: team-a-prod }
`,
    );
    ok(await as('user-a', ['appset', 'create', manifest]), `appset create: ${services()}`);
    const synced = await as('user-a', ['app', 'sync', 'billing-cascade', '--timeout', '120', '-o', 'json']);
    ok(synced, `app sync: ${sync.output().slice(-3000)}`);
    const core = cluster.adminKubeconfig.makeApiClient(CoreV1Api);
    const names = async () =>
      (await core.listNamespacedConfigMap({ namespace: 'team-a-prod' })).items.map((c) => c.metadata!.name);
    expect(await names()).toContain('billing-ui');

    const since = await cluster.audit.mark();
    ok(
      await as('user-a', ['appset', 'delete', 'argocd/team-a-cascade', '--yes']),
      `appset delete: ${services()}`,
    );
    await eventually('billing-cascade and its ConfigMap removed', async () => {
      await collectForegroundDeletions(core, 'team-a-prod');
      return (await appNames('admin')).includes('billing-cascade') || (await names()).includes('billing-ui')
        ? undefined
        : true;
    });
    // The preserved set's objects are untouched; the cascade deleted as team-a's ServiceAccount.
    expect(await names()).toContain('guestbook-ui');
    const deletes = (await cluster.audit.flush({ since })).filter(
      (e) => e.verb === 'delete' && e.objectRef?.resource === 'configmaps',
    );
    expect(deletes.map((e) => [e.objectRef?.name, effectiveUser(e)])).toEqual([['billing-ui', SA_A]]);
  }, 180_000);

  it('never lets the git or cluster credentials reach a log', () => {
    for (const out of [api.output(), repo.output(), appset.output(), sync.output()]) {
      expect(out).not.toContain(GIT_PASSWORD);
      expect(out).not.toContain(cluster.controlPlaneToken);
    }
  });
});
