// Argo CD's spec.source.kustomize options, applied by the real kustomize to a real git checkout.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KustomizeSource } from '@capstan/policy';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { CheckoutStore } from '../checkouts/checkout-store.js';
import { LOCAL_GIT_EGRESS } from '../test-support/egress.js';
import { editCommands } from './kustomize-source.js';
import { ManifestGenerator } from './manifest-generator.js';
import { kustomizeVersionsOf } from './render-tools.js';
import { ManifestRenderError, PathEscapeError } from './manifest-errors.js';
import { obtainedTool } from '@capstan/test/infra';

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: { app: web }
spec:
  replicas: 1
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers: [{ name: web, image: nginx:1.25 }]
`;

interface Obj {
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: {
    replicas?: number;
    selector?: { matchLabels: Record<string, string> };
    template?: { spec: { containers: { image: string }[] } };
  };
  data?: Record<string, string>;
}

describe('Kustomize source options (Argo CD spec.source.kustomize) with the real kustomize', () => {
  let server: GitServer;
  let cacheDir: string;
  let store: CheckoutStore;
  let generator: ManifestGenerator;
  let repo: TestRepository;

  beforeAll(async () => {
    server = await startGitServer();
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'capstan-kustomize-'));
    store = await CheckoutStore.create({
      cacheDir,
      maxCacheBytes: 100e6,
      maxRepoBytes: 50e6,
      refCacheTtlMs: 60_000,
      gitTimeoutMs: 30_000,
      egress: LOCAL_GIT_EGRESS,
    });
    generator = new ManifestGenerator(store, {
      kustomizePath: obtainedTool('obtain-kustomize.sh'),
      helmPath: null,
      scratchDir: cacheDir,
      renderTimeoutMs: 60_000,
      cacheEntries: 100,
    });
    repo = await server.createRepository('kapps.git');
    await repo.commit({
      'base/kustomization.yaml': 'resources:\n  - deploy.yaml\n',
      'base/deploy.yaml': DEPLOYMENT,
      'apps/web/kustomization.yaml': 'resources:\n  - ../../base\nnamePrefix: app-\n',
      'apps/web/patch.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    from: patch-file\n',
      'components/extra/kustomization.yaml':
        'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n  - cm.yaml\n',
      'components/extra/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n',
      'loose/kustomization.yaml': 'resources:\n  - ../components/extra/cm.yaml\n',
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await rm(cacheDir, { recursive: true, force: true });
  });

  const render = async (kustomize: KustomizeSource) => {
    const out = await generator.generate(
      { repoURL: repo.url, targetRevision: 'main', path: 'apps/web', kustomize },
      null,
    );
    return out.manifests.map((m) => JSON.parse(m) as Obj);
  };
  const deployment = async (k: KustomizeSource) => (await render(k)).find((o) => o.kind === 'Deployment')!;

  it('without options builds the directory as it is', async () => {
    const d = await deployment({});
    expect(d.metadata.name).toBe('app-web');
    expect(d.spec?.template?.spec.containers[0]?.image).toBe('nginx:1.25');
  });

  it("namePrefix/nameSuffix replace the kustomization's (kustomize edit set), images and replicas override", async () => {
    const d = await deployment({
      namePrefix: 'prod-',
      nameSuffix: '-v2',
      images: ['nginx=registry.example.com/nginx:1.27'],
      replicas: [{ name: 'web', count: 4 }],
    });
    expect(d.metadata.name).toBe('prod-web-v2');
    expect(d.spec?.template?.spec.containers[0]?.image).toBe('registry.example.com/nginx:1.27');
    expect(d.spec?.replicas).toBe(4);
  });

  it('commonLabels reach selectors unless labelWithoutSelector; commonAnnotations and namespace apply', async () => {
    const d = await deployment({
      commonLabels: { team: 'a' },
      commonAnnotations: { owner: 'team a' },
      namespace: 'team-a',
    });
    expect(d.metadata.labels).toMatchObject({ team: 'a', app: 'web' });
    expect(d.spec?.selector?.matchLabels).toMatchObject({ team: 'a' });
    expect(d.metadata.annotations).toMatchObject({ owner: 'team a' });
    expect(d.metadata.namespace).toBe('team-a');
    const without = await deployment({ commonLabels: { team: 'b' }, labelWithoutSelector: true });
    expect(without.metadata.labels).toMatchObject({ team: 'b' });
    expect(without.spec?.selector?.matchLabels).toEqual({ app: 'web' });
  });

  it('patches (inline and from a file of the application) and components are added', async () => {
    const objs = await render({
      patches: [
        {
          target: { kind: 'Deployment', name: 'web' },
          patch: '- op: replace\n  path: /spec/replicas\n  value: 7\n',
        },
        { path: 'patch.yaml' },
      ],
      components: ['../../components/extra'],
    });
    const d = objs.find((o) => o.kind === 'Deployment')!;
    expect(d.spec?.replicas).toBe(7);
    expect(d.metadata.annotations).toMatchObject({ from: 'patch-file' });
    expect(objs.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/app-extra',
      'Deployment/app-web',
    ]);
  });

  it('a missing component fails unless ignoreMissingComponents', async () => {
    await expect(render({ components: ['../../components/nope'] })).rejects.toBeInstanceOf(
      ManifestRenderError,
    );
    const objs = await render({
      components: ['../../components/nope'],
      ignoreMissingComponents: true,
      nameSuffix: '-x',
    });
    expect(objs.map((o) => o.metadata.name)).toEqual(['app-web-x']);
  });

  it('never writes the shared checkout, and keeps paths inside the repository', async () => {
    await render({ namePrefix: 'edited-', patches: [{ patch: '[]', target: { kind: 'Deployment' } }] });
    const checkout = await store.checkout({
      url: repo.url,
      revision: await repo.sha('main'),
      credential: null,
    });
    try {
      expect(await readFile(path.join(checkout.dir, 'apps/web/kustomization.yaml'), 'utf8')).toBe(
        'resources:\n  - ../../base\nnamePrefix: app-\n',
      );
    } finally {
      checkout.release();
    }
    await expect(render({ components: ['../../../../etc'] })).rejects.toBeInstanceOf(PathEscapeError);
    // A component named like a flag is a path, never an option of kustomize edit.
    await expect(render({ components: ['--help'] })).rejects.toThrow(
      /--help|no such file|not exist|does not exist/i,
    );
    expect(
      (await render({ components: ['--help'], ignoreMissingComponents: true })).map((o) => o.metadata.name),
    ).toEqual(['app-web']);
    await expect(render({ version: 'v4.5.7' })).rejects.toThrow(
      /kustomize version "v4.5.7" is not configured/,
    );
  });

  it("passes the operator's build options (Argo CD kustomize.buildOptions) to every build", async () => {
    const source = { repoURL: repo.url, targetRevision: 'main', path: 'loose' };
    await expect(generator.generate(source, null)).rejects.toThrow(/security|restrict|not in or below/i);
    const loose = new ManifestGenerator(store, {
      kustomizePath: obtainedTool('obtain-kustomize.sh'),
      kustomizeBuildOptions: ['--load-restrictor', 'LoadRestrictionsNone'],
      helmPath: null,
      scratchDir: cacheDir,
      renderTimeoutMs: 60_000,
      cacheEntries: 10,
    });
    const out = await loose.generate(source, null);
    expect(out.manifests.map((m) => (JSON.parse(m) as Obj).metadata.name)).toEqual(['extra']);
  });

  it('picks a named kustomize binary (argocd-cm kustomize.path.<v>) with its own build options', async () => {
    const versions = kustomizeVersionsOf({
      'kustomize.version.v5-named': '/old/path',
      'kustomize.path.v5-named': obtainedTool('obtain-kustomize.sh'),
      'kustomize.buildOptions.v5-named': '--load-restrictor LoadRestrictionsNone',
      'kustomize.buildOptions.orphan': '--x',
    });
    expect([...versions.keys()]).toEqual(['v5-named']);
    const named = new ManifestGenerator(store, {
      kustomizePath: '/nonexistent/kustomize',
      kustomizeVersions: versions,
      helmPath: null,
      scratchDir: cacheDir,
      renderTimeoutMs: 60_000,
      cacheEntries: 10,
    });
    const out = await named.generate(
      { repoURL: repo.url, targetRevision: 'main', path: 'loose', kustomize: { version: 'v5-named' } },
      null,
    );
    expect(out.manifests.map((m) => (JSON.parse(m) as Obj).metadata.name)).toEqual(['extra']);
    await expect(
      named.generate(
        { repoURL: repo.url, targetRevision: 'main', path: 'loose', kustomize: { version: 'v4' } },
        null,
      ),
    ).rejects.toThrow(
      /kustomize version "v4" is not configured on this repo service \(argocd-cm kustomize.path.v4\)/,
    );
  });

  it("runs Argo CD's kustomize edit commands, values after --", () => {
    expect(
      editCommands({
        namePrefix: '-p',
        images: ['a:1'],
        commonLabels: { a: 'b' },
        forceCommonLabels: true,
        commonAnnotations: { c: 'd' },
        namespace: 'ns',
      }),
    ).toEqual([
      ['edit', 'set', 'nameprefix', '--', '-p'],
      ['edit', 'set', 'image', 'a:1'],
      ['edit', 'add', 'label', '--force', 'a:b'],
      ['edit', 'add', 'annotation', 'c:d'],
      ['edit', 'set', 'namespace', '--', 'ns'],
    ]);
  });
});
