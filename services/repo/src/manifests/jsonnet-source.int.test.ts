// Argo CD's directory jsonnet (spec.source.directory.jsonnet): real go-jsonnet (capstan-jsonnet from
// obtain-jsonnet.sh) on a real git checkout, with ext vars, TLAs, libraries and a confined importer.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DirectorySource } from '@capstan/policy';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { CheckoutStore } from '../checkouts/checkout-store.js';
import { LOCAL_GIT_EGRESS } from '../test-support/egress.js';
import { ManifestGenerator } from './manifest-generator.js';
import { ManifestRenderError, PathEscapeError, ToolUnavailableError } from './manifest-errors.js';
import { obtainedTool } from '@capstan/test/infra';

const MAIN = `
local lib = import 'naming.libsonnet';
local local_ = import 'local.libsonnet';
function(replicas=1) [
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: lib.name(std.extVar('env')) },
    data: { replicas: std.toString(replicas), kind: std.type(replicas), code: std.toString(std.extVar('answer')), here: local_.x } },
]
`;

type Obj = { kind: string; metadata: { name: string }; data?: Record<string, string> };

describe('directory jsonnet (Argo CD spec.source.directory.jsonnet) with go-jsonnet', () => {
  let server: GitServer;
  let cacheDir: string;
  let store: CheckoutStore;
  let generator: ManifestGenerator;
  let repo: TestRepository;

  beforeAll(async () => {
    const jsonnet = obtainedTool('obtain-jsonnet.sh');
    server = await startGitServer();
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'capstan-jsonnet-'));
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
      jsonnetPath: jsonnet,
      scratchDir: cacheDir,
      renderTimeoutMs: 60_000,
      cacheEntries: 100,
    });
    repo = await server.createRepository('jsonnet.git');
    await repo.commit({
      'apps/web/main.jsonnet': MAIN,
      'apps/web/local.libsonnet': "{ x: 'near' }",
      'apps/web/plain.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n',
      'vendor/naming.libsonnet': "{ name(env):: 'web-' + env }",
      'evil/main.jsonnet':
        "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { p: importstr '/etc/hostname' } }",
      'evil2/main.jsonnet':
        "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { p: importstr '../../../../../etc/hostname' } }",
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await rm(cacheDir, { recursive: true, force: true });
  });

  const render = async (p: string, directory: DirectorySource, g = generator) => {
    const out = await g.generate({ repoURL: repo.url, targetRevision: 'main', path: p, directory }, null);
    return out.manifests.map((m) => JSON.parse(m) as Obj);
  };

  it('evaluates *.jsonnet with ext vars (string and code), TLAs and libraries beside the YAML', async () => {
    const objs = await render('apps/web', {
      jsonnet: {
        extVars: [
          { name: 'env', value: 'prod' },
          { name: 'answer', value: '40 + 2', code: true },
        ],
        tlas: [{ name: 'replicas', value: '3', code: true }],
        libs: ['vendor'],
      },
    });
    expect(objs).toEqual([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'web-prod' },
        data: { replicas: '3', kind: 'number', code: '42', here: 'near' },
      },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' } },
    ]);
    const asString = await render('apps/web', {
      jsonnet: {
        extVars: [
          { name: 'env', value: 'dev' },
          { name: 'answer', value: '1', code: true },
        ],
        tlas: [{ name: 'replicas', value: '3' }],
        libs: ['vendor'],
      },
    });
    expect(asString[0]?.data).toMatchObject({ replicas: '3', kind: 'string' });
    expect(asString[0]?.metadata.name).toBe('web-dev');
  });

  it('include/exclude apply to jsonnet files too; a missing variable is a render error', async () => {
    expect((await render('apps/web', { exclude: '*.jsonnet' })).map((o) => o.kind)).toEqual(['Service']);
    await expect(render('apps/web', { jsonnet: { libs: ['vendor'] } })).rejects.toThrow(
      /apps\/web\/main\.jsonnet.*(Undefined external variable|env)/,
    );
  });

  it('confines imports to the repository and library paths to it', async () => {
    await expect(render('evil', {})).rejects.toThrow(/outside the repository/);
    await expect(render('evil2', {})).rejects.toBeInstanceOf(ManifestRenderError);
    await expect(render('apps/web', { jsonnet: { libs: ['../outside'] } })).rejects.toBeInstanceOf(
      PathEscapeError,
    );
  });

  it('refuses jsonnet files when jsonnet is not configured', async () => {
    const without = new ManifestGenerator(store, {
      kustomizePath: obtainedTool('obtain-kustomize.sh'),
      helmPath: null,
      scratchDir: cacheDir,
      renderTimeoutMs: 60_000,
      cacheEntries: 10,
    });
    await expect(render('apps/web', {}, without)).rejects.toBeInstanceOf(ToolUnavailableError);
  });
});
