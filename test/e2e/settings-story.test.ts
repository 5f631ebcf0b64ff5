// Story (issue 20, proposal 000's walkthrough): an operator turns impersonation on the way every Argo
// CD operator does, with the flat key of argocd-cm, here `capstan apply -f argocd-cm.yaml`; then
// applies the proposal's AppProject and Applications. The syncs run as the ServiceAccounts the
// proposal names, proven from the API server's audit log; an Application whose destination no rule
// matches syncs as its namespace's `default` ServiceAccount; turning the key off takes effect for
// the next sync without a restart; a sync service restarted later starts with what was applied;
// a misspelled key is a warning naming the nearest key (at apply and at start) and a refusal in
// strict mode; strict ServiceAccount mode refuses the unmatched destination; argocd-cm's
// kustomize.buildOptions counts for the repo service's next render without a restart. Every service is its
// own process (api, repo, appset, sync without --enable-impersonation) on real PostgreSQL, NATS,
// a git server and an API server whose audit log says who wrote what.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { effectiveUser, seedTenant, startCluster, type KubeCluster } from '@capstan/test/kube';
import { capstan } from './api-harness.js';
import { addCluster, loginAdmin } from './cli-setup.js';
import { eventually, ok } from './appset-story-fixtures.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';

interface SyncOperation {
  phase: string;
  message: string;
  identity: string;
}

const WRITE = ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'];
const configMap = (name: string, greeting: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  greeting: ${greeting}\n`;
const argocdCm = (data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\n  labels:\n    app.kubernetes.io/part-of: argocd\ndata:\n${Object.entries(
    data,
  )
    .map(([k, v]) => `  ${k}: "${v}"`)
    .join('\n')}\n`;

/** Proposal 000, example 2: one project, a ServiceAccount per destination namespace. */
const proposalManifests = (server: string, repo: string) => `
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: my-project
  namespace: argocd
spec:
  description: Example Project
  sourceRepos: ['*']
  destinations:
    - { namespace: guestbook, server: '${server}' }
    - { namespace: guestbook-ui, server: '${server}' }
    - { namespace: guestbook-other, server: '${server}' }
  destinationServiceAccounts:
    - { namespace: guestbook, server: '${server}', defaultServiceAccount: guestbook-deployer }
    - { namespace: guestbook-ui, server: '${server}', defaultServiceAccount: guestbook-ui-deployer }
${['guestbook', 'guestbook-ui', 'guestbook-other']
  .map(
    (name) => `---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: { name: ${name}, namespace: argocd }
spec:
  project: my-project
  source: { repoURL: '${repo}', targetRevision: main, path: ${name} }
  destination: { server: '${server}', namespace: ${name} }
`,
  )
  .join('')}`;

describe('settings story: argocd-cm with Argo flat keys turns impersonation on and off, live', () => {
  let cluster: KubeCluster;
  let git: GitServer;
  let repo: TestRepository;
  let db: TestDatabase;
  let bus: TestBus;
  let dir: string;
  let plane: ControlPlane;
  let config: string;
  let revision = 0;
  const admin = (args: string[], input?: string) => capstan(config, ['--context', 'admin', ...args], input);
  const file = async (name: string, content: string) => {
    const p = path.join(dir, name);
    await writeFile(p, content);
    return p;
  };
  const services = () => plane?.output() ?? '';
  /** A new revision of every Application's ConfigMap, so each sync writes. */
  const change = () =>
    repo.commit(
      Object.fromEntries(
        ['guestbook', 'guestbook-ui', 'guestbook-other'].map((n) => [
          `${n}/config.yaml`,
          configMap(n, `revision-${++revision}`),
        ]),
      ),
    );
  const syncApp = async (name: string) => {
    // Well inside the test's time limit, so a sync that never ends fails with the services' output.
    const r = await admin(['app', 'sync', name, '--timeout', '60', '-o', 'json']);
    if (!r.stdout.trim().startsWith('{')) throw new Error(`app sync ${name}: ${r.stderr}\n${services()}`);
    return JSON.parse(r.stdout) as SyncOperation;
  };
  /** Who wrote the ConfigMaps of `namespace` since `since`, per the API server's audit log. */
  const writers = async (since: number, namespace: string) => {
    const events = (await cluster.audit.flush({ since })).filter(
      (e) =>
        e.objectRef?.resource === 'configmaps' &&
        e.objectRef.namespace === namespace &&
        !['get', 'list', 'watch'].includes(e.verb),
    );
    return new Set(events.map(effectiveUser));
  };
  /** The sync service has applied the setting change (it logs each change it applies). */
  const applied = (count: number) =>
    eventually(
      `the sync service applies the setting (${count})`,
      async () =>
        plane.sync.output().split('setting application.sync.impersonation.enabled applied').length - 1 >=
        count
          ? true
          : undefined,
      30_000,
    );
  const applyCm = async (name: string, data: Record<string, string>) =>
    admin(['apply', '-f', await file(name, argocdCm(data))]);

  beforeAll(async () => {
    cluster = await startCluster({ name: 'settings', log: () => {} });
    const rules = [{ apiGroups: [''], resources: ['configmaps'], verbs: WRITE }];
    await seedTenant(cluster.adminKubeconfig, {
      namespace: 'guestbook',
      serviceAccounts: [{ name: 'guestbook-deployer', rules }],
    });
    await seedTenant(cluster.adminKubeconfig, {
      namespace: 'guestbook-ui',
      serviceAccounts: [{ name: 'guestbook-ui-deployer', rules }],
    });
    // No rule matches guestbook-other: the proposal's fallback is its `default` ServiceAccount.
    await seedTenant(cluster.adminKubeconfig, {
      namespace: 'guestbook-other',
      serviceAccounts: [{ name: 'default', rules }],
    });
    git = await startGitServer();
    repo = await git.createRepository('apps/guestbook.git');
    await change();
    db = await createTestDatabase('capstan_settings');
    bus = await createTestBus('settings');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-settings-'));
    config = path.join(dir, 'contexts');
    // The sync service starts as an Argo CD controller does: impersonation off until argocd-cm says so.
    plane = await startControlPlane({
      databaseUrl: db.url,
      bus,
      cacheDir: path.join(dir, 'cache'),
      repoEnv: { CAPSTAN_REVISION_CACHE_TTL_MS: '0' },
      syncArgs: [],
    });
    await loginAdmin(config, plane.api);
    await addCluster(config, dir, cluster, 'story');
  }, 300_000);

  afterAll(async () => {
    await plane?.stop();
    await git?.close();
    await bus?.cleanup();
    await db?.drop();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 180_000);

  it("turns impersonation on with argocd-cm's flat key and shows where the value came from", async () => {
    const r = await applyCm('argocd-cm.yaml', { 'application.sync.impersonation.enabled': 'true' });
    ok(r, `apply argocd-cm: ${services()}`);
    expect(r.stdout).toContain('configmap/argocd-cm created');
    expect(r.stderr).not.toContain('warning');
    await applied(1);
    const shown = await admin(['admin', 'settings', '--show-source', '-o', 'json']);
    ok(shown, 'admin settings');
    expect(JSON.parse(shown.stdout)).toContainEqual(
      expect.objectContaining({
        scope: 'argocd-cm',
        key: 'application.sync.impersonation.enabled',
        value: 'true',
        source: expect.stringMatching(/^applied argocd-cm v1 by /),
        effect: 'sync: application.sync.impersonation.enabled (live)',
      }),
    );
    // Each service's own effective settings, asked of the service itself: the sync service's value
    // is the applied one, and it says so; repo and appset answer too.
    const effective = JSON.parse(shown.stdout) as {
      scope: string;
      key: string;
      value: string;
      source: string;
    }[];
    expect(effective).toContainEqual(
      expect.objectContaining({
        scope: 'sync',
        key: 'application.sync.impersonation.enabled',
        value: 'true',
        source: expect.stringContaining('applied v1'),
      }),
    );
    expect(effective).toContainEqual(
      expect.objectContaining({ scope: 'repo', key: 'egress.allowed-networks', value: '127.0.0.1' }),
    );
    expect(effective.some((e) => e.scope === 'appset' && e.key === 'reconcile.tick-ms')).toBe(true);
    expect(effective.filter((e) => e.source === 'unavailable')).toEqual([]);
    ok(
      await admin(['apply', '-f', await file('proposal.yaml', proposalManifests(cluster.server, repo.url))]),
      'apply the proposal',
    );
  }, 180_000);

  it("syncs each Application as the ServiceAccount the proposal names, per the API server's audit log", async () => {
    for (const [app, sa] of [
      ['guestbook', 'system:serviceaccount:guestbook:guestbook-deployer'],
      ['guestbook-ui', 'system:serviceaccount:guestbook-ui:guestbook-ui-deployer'],
    ] as const) {
      const since = await cluster.audit.mark();
      const op = await syncApp(app);
      expect(op, services()).toMatchObject({ phase: 'Succeeded', identity: sa });
      expect(await writers(since, app)).toEqual(new Set([sa]));
    }
  }, 180_000);

  it("falls back to the destination namespace's default ServiceAccount when no rule matches", async () => {
    const since = await cluster.audit.mark();
    const op = await syncApp('guestbook-other');
    const sa = 'system:serviceaccount:guestbook-other:default';
    expect(op, services()).toMatchObject({ phase: 'Succeeded', identity: sa });
    expect(await writers(since, 'guestbook-other')).toEqual(new Set([sa]));
  }, 180_000);

  it('turns impersonation off again for the next sync, without a restart', async () => {
    ok(
      await applyCm('argocd-cm-off.yaml', { 'application.sync.impersonation.enabled': 'false' }),
      'apply off',
    );
    await applied(2);
    await change();
    const since = await cluster.audit.mark();
    const op = await syncApp('guestbook');
    // The control-plane identity may only impersonate: as itself, it may not write the ConfigMap.
    expect(op.phase, services()).not.toBe('Succeeded');
    expect(op.message).toContain('control-plane credentials of cluster story may not');
    // Its pre-flight review was made as the control plane itself, nothing impersonated (watches the
    // reconciler opened earlier as the ServiceAccount only read, and are not this sync's).
    const audit = await cluster.audit.flush({ since });
    const reviews = audit.filter((e) => e.objectRef?.resource === 'selfsubjectaccessreviews');
    expect(reviews.length).toBeGreaterThan(0);
    expect(
      reviews.filter((e) => e.user.username !== cluster.controlPlaneUsername || e.impersonatedUser),
    ).toEqual([]);
    expect(await writers(since, 'guestbook')).toEqual(new Set());
  }, 180_000);

  // Restarts of the sync service take a minute on a loaded 2-core machine: a longer limit.
  it('warns about a misspelled key naming the nearest one, at apply and at start; strict mode refuses it', async () => {
    const typo = { 'application.sync.impersonaton.enabled': 'true' };
    const r = await applyCm('argocd-cm-typo.yaml', typo);
    ok(r, 'apply the typo');
    expect(r.stderr).toContain(
      'warning: argocd-cm: application.sync.impersonaton.enabled: unknown key "application.sync.impersonaton.enabled" in argocd-cm (did you mean "application.sync.impersonation.enabled"?): ignored',
    );
    const validate = await admin([
      'admin',
      'settings',
      'validate',
      '--strict',
      '-f',
      path.join(dir, 'argocd-cm-typo.yaml'),
    ]);
    expect(validate.code).toBe(2);
    expect(validate.stderr).toContain('did you mean "application.sync.impersonation.enabled"');
    // The same file given at start: a warning in the log; with settings.strict, the start is refused.
    const startDir = await mkdtemp(path.join(dir, 'argocd-config-'));
    await writeFile(path.join(startDir, 'argocd-cm.yaml'), argocdCm(typo));
    await plane.restartSync(['--argocd-config-dir', startDir]);
    expect(plane.sync.output()).toContain('did you mean \\"application.sync.impersonation.enabled\\"');
    await expect(plane.restartSync(['--argocd-config-dir', startDir, '--settings-strict'])).rejects.toThrow(
      /settings\.strict|did you mean/,
    );
  }, 300_000);

  // Restarts of the sync service take a minute on a loaded 2-core machine: a longer limit.
  it('starts with what was applied, and strict ServiceAccount mode refuses the unmatched destination end to end', async () => {
    ok(await applyCm('argocd-cm-on.yaml', { 'application.sync.impersonation.enabled': 'true' }), 'apply on');
    // Applied while no sync service runs: the restarted one reads it from its store (or the stream).
    await plane.restartSync(['--strict-service-accounts']);
    await eventually(
      'impersonation on in the restarted sync service',
      async () =>
        /"impersonation":true/.test(plane.sync.output()) ||
        plane.sync.output().includes('setting application.sync.impersonation.enabled applied')
          ? true
          : undefined,
      30_000,
    );
    await change();
    const matched = await syncApp('guestbook');
    expect(matched, services()).toMatchObject({
      phase: 'Succeeded',
      identity: 'system:serviceaccount:guestbook:guestbook-deployer',
    });
    const since = await cluster.audit.mark();
    const refused = await syncApp('guestbook-other');
    expect(refused.phase, services()).toBe('Denied');
    expect(refused.message).toContain('strict mode refuses instead of using the default ServiceAccount');
    expect(await writers(since, 'guestbook-other')).toEqual(new Set());
  }, 300_000);

  it("takes argocd-cm's kustomize.buildOptions for the next render, without restarting the repo service", async () => {
    // A kustomization that reads a file above its own directory: kustomize's default load
    // restrictor refuses it, Argo CD's usual kustomize.buildOptions lets it through.
    await repo.commit({
      'loose/kustomization.yaml': 'resources: [../shared/extra.yaml]\n',
      'shared/extra.yaml': configMap('extra', 'loose'),
    });
    const app = `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: { name: loose, namespace: argocd }\nspec:\n  project: my-project\n  source: { repoURL: '${repo.url}', targetRevision: main, path: loose }\n  destination: { server: '${cluster.server}', namespace: guestbook }\n`;
    ok(await admin(['apply', '-f', await file('loose.yaml', app)]), 'apply the loose Application');
    const refused = await syncApp('loose');
    expect(refused.phase, services()).not.toBe('Succeeded');
    expect(refused.message).toMatch(/security|restrict|not in or below/i);

    const r = await applyCm('argocd-cm-kustomize.yaml', {
      'application.sync.impersonation.enabled': 'true',
      'kustomize.buildOptions': '--load-restrictor LoadRestrictionsNone',
    });
    ok(r, 'apply kustomize.buildOptions');
    // Live in the repo service, as Argo CD's repo server reads it per request: no warning, no restart.
    expect(r.stderr).not.toContain('warning');
    await eventually(
      'the repo service applies kustomize.build-options',
      async () =>
        plane.repo.output().includes('setting kustomize.build-options applied') ? true : undefined,
      30_000,
    );
    const since = await cluster.audit.mark();
    const synced = await syncApp('loose');
    expect(synced, services()).toMatchObject({
      phase: 'Succeeded',
      identity: 'system:serviceaccount:guestbook:guestbook-deployer',
    });
    expect(await writers(since, 'guestbook')).toEqual(
      new Set(['system:serviceaccount:guestbook:guestbook-deployer']),
    );
  }, 180_000);
});
