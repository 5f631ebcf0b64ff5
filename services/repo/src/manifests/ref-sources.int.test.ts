// Argo CD's multiple sources in the repo service: a chart in one repository reads `$values/…` value
// files from another (a ref source), checked out with its own credential at its own revision, with
// the real helm on a real git server; reads stay inside the ref source's checkout and are bounded.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '@capstan/service';
import type { HelmSource } from '@capstan/policy';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { CheckoutStore, type CheckoutCredential } from '../checkouts/checkout-store.js';
import { LOCAL_GIT_EGRESS } from '../test-support/egress.js';
import { sourceOptionsOf } from '../rpc/source-options.js';
import { refSourcesOf, usedRefs } from '../rpc/ref-sources.js';
import { MAX_HELM_FILE_BYTES } from './helm-source.js';
import { ManifestGenerator, type RefSourceCheckout } from './manifest-generator.js';
import { ManifestRenderError, PathEscapeError } from './manifest-errors.js';
import { obtainedTool } from '@capstan/test/infra';

const TEMPLATE = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cm
data:
  replicas: {{ .Values.replicas | quote }}
  env: {{ .Values.env | quote }}
  file: {{ .Values.fileContent | default "" | quote }}
`;

type Cm = { metadata: { name: string }; data: Record<string, string> };

describe('ref sources: $ref value files of another repository (Argo CD multiple sources)', () => {
  let server: GitServer;
  let cacheDir: string;
  let generator: ManifestGenerator;
  let charts: TestRepository;
  let values: TestRepository;
  let firstValues: string;
  const valuesCredential: CheckoutCredential = {
    id: 'cred-values',
    version: '1',
    auth: { username: 'team-a', password: 'values-password' },
  };

  beforeAll(async () => {
    server = await startGitServer();
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'capstan-refs-'));
    const store = await CheckoutStore.create({
      cacheDir,
      maxCacheBytes: 100e6,
      maxRepoBytes: 50e6,
      refCacheTtlMs: 0,
      gitTimeoutMs: 30_000,
      egress: LOCAL_GIT_EGRESS,
    });
    generator = new ManifestGenerator(store, {
      kustomizePath: obtainedTool('obtain-kustomize.sh'),
      helmPath: obtainedTool('obtain-helm.sh'),
      scratchDir: cacheDir,
      renderTimeoutMs: 60_000,
      cacheEntries: 100,
    });
    charts = await server.createRepository('charts.git');
    await charts.commit({
      'web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 0.1.0\n',
      'web/values.yaml': 'replicas: 1\nenv: none\n',
      'web/templates/cm.yaml': TEMPLATE,
    });
    values = await server.createRepository('team-a/values.git', {
      credentials: [{ username: 'team-a', password: 'values-password' }],
    });
    firstValues = await values.commit({
      'envs/prod/values.yaml': 'replicas: 3\nenv: prod\n',
      'envs/prod/config.txt': 'from the values repository',
      'big.yaml': `env: ${'x'.repeat(MAX_HELM_FILE_BYTES)}\n`,
    });
    await values.commit({ 'envs/prod/values.yaml': 'replicas: 5\nenv: prod-v2\n' });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  const ref = (
    targetRevision: string,
    credential: CheckoutCredential | null = valuesCredential,
  ): RefSourceCheckout => ({
    name: 'values',
    repoURL: values.url,
    targetRevision,
    credential,
  });
  const render = async (helm: HelmSource, refs: RefSourceCheckout[]) => {
    const out = await generator.generate(
      { repoURL: charts.url, targetRevision: 'main', path: 'web', helm: { releaseName: 'web', ...helm } },
      null,
      refs,
    );
    return out.manifests.map((m) => JSON.parse(m) as Cm);
  };

  it("reads $values/… value files and file parameters from the ref source's checkout at its revision", async () => {
    const helm = {
      valueFiles: ['$values/envs/prod/values.yaml'],
      fileParameters: [{ name: 'fileContent', path: '$values/envs/prod/config.txt' }],
    };
    const [latest] = await render(helm, [ref('main')]);
    expect(latest?.data).toEqual({ replicas: '5', env: 'prod-v2', file: 'from the values repository' });
    // Pinned to the first commit (as a rollback or status.sync.revisions pins it): that commit's file.
    const [pinned] = await render(helm, [ref(firstValues)]);
    expect(pinned?.data).toMatchObject({ replicas: '3', env: 'prod' });
  });

  it('checks the ref source out with its own credential: without it the values repository is not read', async () => {
    await expect(
      render({ valueFiles: ['$values/envs/prod/values.yaml'] }, [ref('main', null)]),
    ).rejects.toThrow(/values\.git/);
  });

  it('refuses a $ref file escaping the checkout, a missing one, and one above the size bound', async () => {
    await expect(render({ valueFiles: ['$values/../../etc/passwd'] }, [ref('main')])).rejects.toBeInstanceOf(
      PathEscapeError,
    );
    await expect(render({ valueFiles: ['$values/nope.yaml'] }, [ref('main')])).rejects.toThrow(
      ManifestRenderError,
    );
    const [ignored] = await render({ valueFiles: ['$values/nope.yaml'], ignoreMissingValueFiles: true }, [
      ref('main'),
    ]);
    expect(ignored?.data).toMatchObject({ replicas: '1' });
    await expect(render({ valueFiles: ['$values/big.yaml'] }, [ref('main')])).rejects.toThrow(
      /larger than 4194304 bytes/,
    );
  });

  it('checks the request at the edge: ref names, declared refs, escapes, with field paths', () => {
    const refs = refSourcesOf([{ name: 'values', repoUrl: values.url, targetRevision: 'main' }]);
    const source = (valueFiles: string[]) => ({
      repoUrl: charts.url,
      targetRevision: 'main',
      path: 'web',
      chart: '',
      helm: {
        releaseName: '',
        namespace: '',
        valueFiles,
        values: '',
        valuesObjectJson: '',
        parameters: [],
        fileParameters: [],
        skipCrds: false,
        ignoreMissingValueFiles: false,
        passCredentials: false,
        version: '',
        kubeVersion: '',
        apiVersions: [],
        skipTests: false,
        skipSchemaValidation: false,
      },
    });
    const fields = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        if (err instanceof ValidationError) return err.violations.map((v) => `${v.field}: ${v.description}`);
        throw err;
      }
      return [];
    };
    expect(fields(() => sourceOptionsOf(source(['$values/../../etc/passwd']), refs))).toEqual([
      'source.helm.valueFiles[0]: must resolve inside the repository of $values (it climbs above the root with "..")',
    ]);
    expect(fields(() => sourceOptionsOf(source(['$other/v.yaml']), refs))).toEqual([
      'source.helm.valueFiles[0]: source referenced "$other", which is not one of the available sources ($values)',
    ]);
    expect(fields(() => refSourcesOf([{ name: '../x', repoUrl: values.url, targetRevision: '' }]))).toEqual([
      "refSources[0].name: sources.ref ../x cannot contain any special characters except '_' and '-'",
    ]);
    expect(
      fields(() => refSourcesOf([{ name: 'v', repoUrl: 'ext::sh -c id', targetRevision: '' }])),
    ).toHaveLength(1);
    const options = sourceOptionsOf(source(['$values/envs/prod/values.yaml', 'values.yaml']), refs);
    expect(usedRefs(refs, options.helm).map((r) => r.name)).toEqual(['values']);
    expect(usedRefs(refs, { valueFiles: ['values.yaml'] })).toEqual([]);
  });
});
