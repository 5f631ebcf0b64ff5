import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { CheckoutStore } from '../checkouts/checkout-store.js';
import { ManifestGenerator } from './manifest-generator.js';
import { ManifestRenderError, PathEscapeError, PathNotFoundError } from './manifest-errors.js';
import { RepoListing } from './repo-listing.js';
import { LOCAL_GIT_EGRESS } from '../test-support/egress.js';
import { obtainedTool } from '@capstan/test/infra';

const deployment = (name: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  replicas: 1\n`;

describe('manifest generation from a real repository', () => {
  let server: GitServer;
  let cacheDir: string;
  let store: CheckoutStore;
  let generator: ManifestGenerator;
  let withHelm: ManifestGenerator;
  let listing: RepoListing;
  let repo: TestRepository;

  beforeAll(async () => {
    // The first run on a machine builds kustomize and helm from their Go modules (minutes).
    const kustomize = obtainedTool('obtain-kustomize.sh');
    const helm = obtainedTool('obtain-helm.sh');
    server = await startGitServer();
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'capstan-manifests-'));
    store = await CheckoutStore.create({
      cacheDir,
      maxCacheBytes: 100e6,
      maxRepoBytes: 50e6,
      refCacheTtlMs: 60_000,
      gitTimeoutMs: 30_000,
      egress: LOCAL_GIT_EGRESS,
    });
    generator = new ManifestGenerator(store, {
      kustomizePath: kustomize,
      helmPath: null,
      scratchDir: cacheDir,
      renderTimeoutMs: 60_000,
      cacheEntries: 100,
    });
    withHelm = new ManifestGenerator(store, {
      kustomizePath: kustomize,
      helmPath: helm,
      scratchDir: cacheDir,
      renderTimeoutMs: 60_000,
      cacheEntries: 100,
    });
    listing = new RepoListing(store);
    repo = await server.createRepository('apps.git');
    await repo.commit({
      'plain/a.yaml': deployment('a') + '---\n' + 'apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n',
      'plain/b.json': JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' } }),
      'plain/README.md': '# not a manifest\n',
      'plain/nested/c.yaml': deployment('c'),
      'plain/nested/skip.yaml': deployment('skip'),
      'base/kustomization.yaml': 'resources:\n  - deploy.yaml\n',
      'base/deploy.yaml': deployment('web'),
      'overlays/prod/kustomization.yaml':
        'resources:\n  - ../../base\nnamePrefix: prod-\nnamespace: team-a-prod\n',
      'broken/kustomization.yaml': 'resources:\n  - missing.yaml\n',
      'badyaml/x.yaml': 'kind: [unclosed\n',
      'chart/Chart.yaml': 'apiVersion: v2\nname: demo\nversion: 0.1.0\n',
      'chart/values.yaml': 'replicas: 1\n',
      'chart/values-prod.yaml': 'replicas: 3\n',
      'chart/templates/cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\n  namespace: {{ .Release.Namespace }}\ndata:\n  replicas: "{{ .Values.replicas }}"\n',
      'clusters/east/config.json': '{"name":"east"}',
      'clusters/west/config.json': '{"name":"west"}',
      'clusters/skip/config.json': '{"name":"skip"}',
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await rm(cacheDir, { recursive: true, force: true });
  });

  const source = (p: string, extra: object = {}) => ({
    repoURL: repo.url,
    targetRevision: 'main',
    path: p,
    ...extra,
  });
  const names = (manifests: readonly string[]) =>
    manifests.map((m) => (JSON.parse(m) as { metadata: { name: string } }).metadata.name);

  it('renders a plain directory, top level only by default', async () => {
    const out = await generator.generate(source('plain'), null);
    expect(out.sourceType).toBe('directory');
    expect(out.revision).toBe(await repo.sha('main'));
    expect(names(out.manifests)).toEqual(['a', 'a', 'b']);
  });

  it('answers repeated requests from the render cache, per credential', async () => {
    const seen: string[] = [];
    const observed = new ManifestGenerator(store, {
      kustomizePath: obtainedTool('obtain-kustomize.sh'),
      helmPath: null,
      scratchDir: cacheDir,
      renderTimeoutMs: 60_000,
      cacheEntries: 10,
      observer: { manifestCache: (r) => seen.push(r), rendered: (t) => seen.push(`rendered:${t}`) },
    });
    const first = await observed.generate(source('overlays/prod'), null);
    const again = await observed.generate(source('overlays/prod'), null);
    expect(again).toBe(first);
    const other = { id: 'another-credential', version: '1', auth: { username: 'x', password: 'y' } };
    await observed.generate(source('overlays/prod'), other);
    expect(seen).toEqual(['miss', 'rendered:kustomize', 'hit', 'miss', 'rendered:kustomize']);
  });

  it('recurses and applies include/exclude globs on request', async () => {
    const out = await generator.generate(
      source('plain', { directory: { recurse: true, exclude: '{nested/skip.yaml}' } }),
      null,
    );
    expect(names(out.manifests)).toEqual(['a', 'a', 'b', 'c']);
    const only = await generator.generate(
      source('plain', { directory: { recurse: true, include: '*.json' } }),
      null,
    );
    expect(names(only.manifests)).toEqual(['b']);
    const both = await generator.generate(
      source('plain', { directory: { recurse: true, include: '{b.json,nested/*}', exclude: '*/skip.yaml' } }),
      null,
    );
    expect(names(both.manifests)).toEqual(['b', 'c']);
  });

  it('builds kustomize applications with bases elsewhere in the repository', async () => {
    const out = await generator.generate(source('overlays/prod'), null);
    expect(out.sourceType).toBe('kustomize');
    const [obj] = out.manifests.map(
      (m) => JSON.parse(m) as { metadata: { name: string; namespace: string } },
    );
    expect(obj?.metadata).toEqual({ name: 'prod-web', namespace: 'team-a-prod' });
  });

  it('renders Helm charts with value files from the repository when Helm is configured', async () => {
    const out = await withHelm.generate(
      source('chart', {
        helm: { releaseName: 'web', namespace: 'team-a', valueFiles: ['values-prod.yaml'] },
      }),
      null,
    );
    expect(out.sourceType).toBe('helm');
    expect(out.manifests.map((m) => JSON.parse(m) as unknown)).toEqual([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'web-cm', namespace: 'team-a' },
        data: { replicas: '3' },
      },
    ]);
    await expect(
      withHelm.generate(source('chart', { helm: { valueFiles: ['../../../etc/passwd'] } }), null),
    ).rejects.toBeInstanceOf(PathEscapeError);
    await expect(generator.generate(source('chart'), null)).rejects.toThrow(
      /is a Helm chart, but Helm is not configured/,
    );
  });

  it('reports a malformed kustomization and bad YAML naming repository, revision and path', async () => {
    const err = await generator.generate(source('broken'), null).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ManifestRenderError);
    expect((err as Error).message).toContain('path broken');
    expect((err as Error).message).toContain(repo.url);
    expect((err as Error).message).toContain('revision main');
    await expect(generator.generate(source('badyaml'), null)).rejects.toThrow(
      /badyaml\/x\.yaml: invalid YAML/,
    );
  });

  it('refuses paths that escape the repository and reports missing ones', async () => {
    await expect(generator.generate(source('../..'), null)).rejects.toBeInstanceOf(PathEscapeError);
    await expect(generator.generate(source('/etc'), null)).rejects.toBeInstanceOf(PathEscapeError);
    await expect(generator.generate(source('nope'), null)).rejects.toBeInstanceOf(PathNotFoundError);
  });

  it('refuses a revision whose tree has symbolic links pointing outside the repository', async () => {
    await repo.commit({ 'plain/passwd.yaml': { symlink: '/etc/passwd' } }, { branch: 'evil' });
    await repo.commit(
      { 'evil-kustomize/kustomization.yaml': 'resources:\n  - ../plain/passwd.yaml\n' },
      { branch: 'evil' },
    );
    await expect(generator.generate({ ...source('plain'), targetRevision: 'evil' }, null)).rejects.toThrow(
      /symbolic links pointing outside the repository: plain\/passwd\.yaml/,
    );
    await expect(
      generator.generate({ ...source('evil-kustomize'), targetRevision: 'evil' }, null),
    ).rejects.toBeInstanceOf(PathEscapeError);
  });

  it('lists directories and files matching globs, with exclusions, for generators', async () => {
    const dirs = await listing.listDirectories({
      url: repo.url,
      revision: 'main',
      credential: null,
      patterns: [
        { pattern: 'clusters/*', exclude: false },
        { pattern: 'clusters/skip', exclude: true },
      ],
    });
    expect(dirs.paths).toEqual(['clusters/east', 'clusters/west']);
    const files = await listing.listFiles({
      url: repo.url,
      revision: 'main',
      credential: null,
      patterns: [{ pattern: 'clusters/**/config.json', exclude: false }],
      withContent: true,
    });
    expect(files.files.map((f) => [f.path, f.content])).toEqual([
      ['clusters/east/config.json', '{"name":"east"}'],
      ['clusters/skip/config.json', '{"name":"skip"}'],
      ['clusters/west/config.json', '{"name":"west"}'],
    ]);
  });
});
