// Chart sources (Argo CD spec.source.chart) against a real Helm repository (node:http, basic auth,
// archives made by the real helm) and a real OCI registry (CNCF Distribution, htpasswd), pulled by
// the real helm through the egress proxy, with credentials selected per project by the
// CredentialService on PostgreSQL (one audit row each).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateAudit, migrateToLatest, type Kysely } from '@capstan/db';
import { parseKeyring } from '@capstan/sealing';
import { createTestDatabase, type TestDatabase } from '@capstan/test/infra';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { CheckoutStore } from '../checkouts/checkout-store.js';
import { LOCAL_GIT_EGRESS } from '../test-support/egress.js';
import { DEFAULT_DENIED_NETWORKS, egressPolicy } from '../checkouts/egress.js';
import { CredentialService } from '../credentials/credential-service.js';
import type { RepoDatabase } from '../credentials/credential.table.js';
import { ManifestGenerator } from '../manifests/manifest-generator.js';
import { repoMigrations } from '../migrations/index.js';
import {
  hostAddress,
  startChartRepository,
  startOciRegistry,
  type ChartRepositoryServer,
  type OciRegistry,
} from '@capstan/test/charts';
import { ChartStore } from './chart-store.js';
import { obtainedTool } from '@capstan/test/infra';

// bcrypt (cost 10) of the passwords below, for the registry's htpasswd.
const TEAM_A_PASS = 's3cret-oci-pass';
const TEAM_A_HASH = '$2a$10$Uv4XAiexkMoDVRAWLXG2CuO0IaV1hbPNSTim0sH1RAAMeQay13u6u';
const TEAM_B_PASS = 'other-team-pass';
const TEAM_B_HASH = '$2a$10$RzoTdyUiFzcACjlBbkjpW.6G7/709TIAc86CJnJCf/Y5B5NRL8H.6';
const REPO_PASS = 'helm-repo-pass';
const system = { actor: 'service:sync' };

type Cm = { kind: string; metadata: { name: string }; data: Record<string, string> };

describe('chart sources from a Helm repository and an OCI registry (real helm, real registry)', () => {
  let testDb: TestDatabase;
  let db: Kysely<RepoDatabase>;
  let credentials: CredentialService;
  let dir: string;
  let repo: ChartRepositoryServer;
  let registry: OciRegistry;
  let charts: ChartStore;
  let generator: ManifestGenerator;
  let git: GitServer;
  let umbrella: TestRepository;

  beforeAll(async () => {
    const helm = obtainedTool('obtain-helm.sh');
    const registryBin = obtainedTool('obtain-registry.sh');
    testDb = await createTestDatabase('capstan_repo_charts');
    db = createDb<RepoDatabase>(testDb.url);
    await migrateAudit(db as unknown as Kysely<unknown>);
    await migrateToLatest(db, { schema: 'repo', migrations: repoMigrations });
    credentials = new CredentialService(
      db,
      parseKeyring(JSON.stringify({ active: 'k1', keys: { k1: Buffer.alloc(32, 7).toString('base64') } })),
    );
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-charts-'));
    repo = await startChartRepository({
      helm,
      dir: path.join(dir, 'repo'),
      users: { 'team-a': REPO_PASS },
      charts: [
        { name: 'web', version: '1.0.0' },
        { name: 'web', version: '1.2.0' },
        { name: 'web', version: '2.0.0' },
      ],
    });
    registry = await startOciRegistry({
      registry: registryBin,
      helm,
      dir: path.join(dir, 'registry'),
      htpasswd: { 'team-a': TEAM_A_HASH, 'team-b': TEAM_B_HASH },
    });
    await registry.push({ name: 'api', version: '0.3.0' }, 'team-a', TEAM_A_PASS);
    // Tests reach this host's address (a private network, allowed by default); loopback stays denied.
    const egress = egressPolicy({ denied: DEFAULT_DENIED_NETWORKS, allowed: '' });
    charts = new ChartStore({
      runner: { helm, egress, scratchDir: path.join(dir, 'scratch'), timeoutMs: 60_000, maxBytes: 10e6 },
      dir: path.join(dir, 'charts'),
      maxCacheBytes: 100e6,
      resolutionTtlMs: 60_000,
    });
    const checkouts = await CheckoutStore.create({
      cacheDir: path.join(dir, 'checkouts'),
      maxCacheBytes: 100e6,
      maxRepoBytes: 50e6,
      refCacheTtlMs: 60_000,
      gitTimeoutMs: 30_000,
      // The git server is on loopback: checkouts may reach it, helm (under test) may not.
      egress: LOCAL_GIT_EGRESS,
    });
    git = await startGitServer();
    umbrella = await git.createRepository('umbrella.git');
    await umbrella.commit({
      'umbrella/Chart.yaml': `apiVersion: v2\nname: umbrella\nversion: 0.1.0\ndependencies:\n  - name: web\n    version: 1.0.0\n    repository: ${repo.url}\n`,
      'umbrella/templates/cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-umbrella\n',
      'escape/Chart.yaml':
        'apiVersion: v2\nname: escape\nversion: 0.1.0\ndependencies:\n  - name: x\n    version: 1.0.0\n    repository: file:///etc\n',
    });
    generator = new ManifestGenerator(checkouts, {
      kustomizePath: obtainedTool('obtain-kustomize.sh'),
      helmPath: helm,
      charts,
      scratchDir: path.join(dir, 'scratch'),
      renderTimeoutMs: 60_000,
      cacheEntries: 100,
    });
    for (const [project, user, password, url] of [
      ['team-a', 'team-a', REPO_PASS, repo.url],
      ['team-a', 'team-a', TEAM_A_PASS, registry.url],
      ['team-b', 'team-b', TEAM_B_PASS, registry.url],
    ] as const) {
      await credentials.create(
        {
          url,
          project,
          type: 'helm',
          displayName: '',
          username: user,
          insecure: false,
          enableOci: url.startsWith('oci://'),
          insecureOciForceHttp: url.startsWith('oci://'),
          secret: { password },
        },
        { actor: 'user:admin' },
      );
    }
  }, 900_000);
  afterAll(async () => {
    await git?.close();
    await repo?.close();
    await registry?.close();
    await db?.destroy();
    await testDb?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Renders a chart source for an Application of `project`, with the credential selected for it. */
  const render = async (project: string, url: string, chart: string, targetRevision: string) => {
    const lookup = await credentials.lookupForApplication(
      { url, project, application: `argocd/${chart}` },
      system,
    );
    await lookup.recorded;
    const out = await generator.generate(
      { repoURL: url, targetRevision, path: '', chart, helm: { releaseName: 'rel', values: 'greeting: hi' } },
      lookup.credential,
    );
    return {
      ...out,
      objects: out.manifests.map((m) => JSON.parse(m) as Cm),
      credentialId: lookup.credentialId,
    };
  };

  it('pulls a chart from a Helm repository with the project credential (basic auth) and renders it', async () => {
    const out = await render('team-a', repo.url, 'web', '1.0.0');
    expect(out.revision).toBe('1.0.0');
    expect(out.sourceType).toBe('helm');
    expect(out.objects).toEqual([
      expect.objectContaining({
        kind: 'ConfigMap',
        metadata: expect.objectContaining({ name: 'rel-web' }),
        data: { version: '1.0.0', greeting: 'hi' },
      }),
    ]);
    expect(repo.requests.some((r) => r.path === '/charts/web-1.0.0.tgz' && r.user === 'team-a')).toBe(true);
  });

  it('resolves a semver constraint as helm does, and reuses a pulled chart without the network', async () => {
    expect((await render('team-a', repo.url, 'web', '^1.0.0')).revision).toBe('1.2.0');
    expect((await render('team-a', repo.url, 'web', '*')).revision).toBe('2.0.0');
    const before = repo.requests.length;
    expect((await render('team-a', repo.url, 'web', '1.0.0')).revision).toBe('1.0.0');
    expect(repo.requests.length).toBe(before);
  });

  it('without the credential the repository refuses helm, and the error names the chart', async () => {
    await expect(render('team-c', repo.url, 'web', '1.0.0')).rejects.toThrow(
      /chart web of http:\/\/.*Failed to update the following repositories/,
    );
    expect(repo.requests.some((r) => r.path === '/index.yaml' && r.user === '')).toBe(true);
  });

  it('pulls an OCI chart with the credential of the Application project, never another project', async () => {
    const a = await render('team-a', registry.url, 'api', '0.3.0');
    expect(a.objects[0]?.data.version).toBe('0.3.0');
    const b = await render('team-b', registry.url, 'api', '0.3.0');
    expect(b.credentialId).not.toBe(a.credentialId);
    // Separate pulls per credential: the two projects share nothing on disk.
    const keys = [...charts.pulls.keys()].filter((k) => k.includes('"api"'));
    expect(keys).toHaveLength(2);
    // The credential chosen is audited for each lookup, by id and project.
    const rows = await db
      .withSchema('audit')
      .selectFrom('credential_decisions' as never)
      .selectAll()
      .execute();
    const lookups = (
      rows as { operation: string; project: string | null; chosen_id: string | null }[]
    ).filter((r) => r.operation === 'lookup' && r.chosen_id !== null);
    expect(lookups.some((r) => r.project === 'team-b' && r.chosen_id === b.credentialId)).toBe(true);
    expect(lookups.some((r) => r.project === 'team-a' && r.chosen_id === a.credentialId)).toBe(true);
  });

  it('renders an OCI chart with value files from a git ref source ($values/…), each at its own revision', async () => {
    const values = await git.createRepository('chart-values.git');
    const first = await values.commit({ 'envs/prod/values.yaml': 'greeting: from-git\n' });
    await values.commit({ 'envs/prod/values.yaml': 'greeting: from-git-v2\n' });
    const lookup = await credentials.lookupForApplication(
      { url: registry.url, project: 'team-a', application: 'argocd/api' },
      system,
    );
    const renderAt = async (revision: string) => {
      const out = await generator.generate(
        {
          repoURL: registry.url,
          targetRevision: '0.3.0',
          path: '',
          chart: 'api',
          helm: { releaseName: 'rel', valueFiles: ['$values/envs/prod/values.yaml'] },
        },
        lookup.credential,
        [{ name: 'values', repoURL: values.url, targetRevision: revision, credential: null }],
      );
      return out.manifests.map((m) => JSON.parse(m) as Cm);
    };
    expect((await renderAt('main'))[0]?.data).toEqual({ version: '0.3.0', greeting: 'from-git-v2' });
    // The ref source's commit is part of the rendering's identity: another commit, another render.
    expect((await renderAt(first))[0]?.data).toEqual({ version: '0.3.0', greeting: 'from-git' });
    await expect(
      generator.generate(
        {
          repoURL: registry.url,
          targetRevision: '0.3.0',
          path: '',
          chart: 'api',
          helm: { valueFiles: ['$values/envs/none.yaml'] },
        },
        lookup.credential,
        [{ name: 'values', repoURL: values.url, targetRevision: 'main', credential: null }],
      ),
    ).rejects.toThrow(/\$values\/envs\/none\.yaml/);
  });

  it('refuses a repository on a denied network before helm runs, and a redirect to one while it runs', async () => {
    await expect(render('team-a', 'http://169.254.169.254/charts', 'web', '1.0.0')).rejects.toThrow(
      /169\.254\.169\.254.*egress\.denied-networks/,
    );
    // 0x7f000001 is loopback in another spelling: Go does not take it for a loopback literal, so the
    // redirect goes through the proxy, which finds 127.0.0.1 behind it and refuses.
    const port = new URL(repo.url).port;
    repo.redirect('/index.yaml', `http://0x7f000001:${port}/index.yaml`);
    try {
      await expect(render('team-a', repo.url, 'web', '^2.0.0')).rejects.toThrow(
        /resolves to 127\.0\.0\.1, a network the repo service may not reach/,
      );
    } finally {
      repo.redirect('/index.yaml', '');
    }
    expect(hostAddress()).not.toBe('127.0.0.1');
  });

  it("builds a git chart's dependencies from a Helm repository with the project credential (helm dependency build)", async () => {
    const renderUmbrella = (project: string, dir = 'umbrella') =>
      generator.generate(
        { repoURL: umbrella.url, targetRevision: 'main', path: dir, helm: { releaseName: 'rel' } },
        null,
        [],
        async (url) => {
          const lookup = await credentials.lookupForApplication(
            { url, project, application: 'argocd/u' },
            system,
          );
          await lookup.recorded;
          return lookup.credential;
        },
      );
    const out = await renderUmbrella('team-a');
    const names = out.manifests.map((m) => (JSON.parse(m) as Cm).metadata.name).sort();
    expect(names).toEqual(['rel-umbrella', 'rel-web']);
    // Another project without a credential for that repository gets no rendering (none was cached).
    await expect(renderUmbrella('team-c')).rejects.toThrow(/helm dependency build/);
    await expect(renderUmbrella('team-a', 'escape')).rejects.toThrow(
      /file:\/\/\/etc\) resolved to outside repository root/,
    );
  });
});
