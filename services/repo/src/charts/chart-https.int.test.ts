// Chart sources and dependencies over HTTPS (Argo CD's `insecure` for a repository with a certificate
// no one trusts) and OCI dependencies from registries over plain HTTP and HTTPS, with the real helm
// and a real registry (CNCF Distribution). HTTPS from helm goes through the egress proxy's CONNECT
// tunnel (the servers are on this host's address, which Go proxies): the proxy checks the tunnel's
// address like any other, and helm still verifies the certificate inside it unless told otherwise.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  selfSignedCertificate,
  startChartRepository,
  startOciRegistry,
  type ChartRepositoryServer,
  type OciRegistry,
} from '@capstan/test/charts';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { CheckoutStore, type CheckoutCredential } from '../checkouts/checkout-store.js';
import type { GitAuth } from '../checkouts/git-process.js';
import { DEFAULT_DENIED_NETWORKS, egressPolicy } from '../checkouts/egress.js';
import { ManifestGenerator } from '../manifests/manifest-generator.js';
import { LOCAL_GIT_EGRESS } from '../test-support/egress.js';
import { ChartStore } from './chart-store.js';
import { obtainedTool } from '@capstan/test/infra';

// bcrypt (cost 10) of OCI_PASS, for the registries' htpasswd.
const OCI_PASS = 's3cret-oci-pass';
const OCI_HASH = '$2a$10$Uv4XAiexkMoDVRAWLXG2CuO0IaV1hbPNSTim0sH1RAAMeQay13u6u';
const REPO_PASS = 'helm-repo-pass';

let credentialVersion = 0;
const credential = (auth: GitAuth): CheckoutCredential => ({
  id: `c${++credentialVersion}`,
  version: String(credentialVersion),
  auth,
});

describe('charts over HTTPS through the egress proxy, and OCI dependencies (real helm, real registry)', () => {
  let dir: string;
  let httpsRepo: ChartRepositoryServer;
  let tlsRegistry: OciRegistry;
  let plainRegistry: OciRegistry;
  let git: GitServer;
  let charts: TestRepository;
  let generator: ManifestGenerator;

  beforeAll(async () => {
    const helm = obtainedTool('obtain-helm.sh');
    const registry = obtainedTool('obtain-registry.sh');
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-charts-https-'));
    const tls = await selfSignedCertificate(path.join(dir, 'tls'));
    httpsRepo = await startChartRepository({
      helm,
      dir: path.join(dir, 'repo'),
      users: { 'team-a': REPO_PASS },
      charts: [{ name: 'web', version: '1.0.0' }],
      tls,
    });
    const users = { 'team-a': OCI_HASH };
    tlsRegistry = await startOciRegistry({
      registry,
      helm,
      dir: path.join(dir, 'tls-oci'),
      htpasswd: users,
      tls,
    });
    plainRegistry = await startOciRegistry({ registry, helm, dir: path.join(dir, 'oci'), htpasswd: users });
    await tlsRegistry.push({ name: 'api', version: '0.3.0' }, 'team-a', OCI_PASS);
    await plainRegistry.push({ name: 'worker', version: '0.1.0' }, 'team-a', OCI_PASS);
    git = await startGitServer();
    charts = await git.createRepository('umbrellas.git');
    const umbrella = (name: string, deps: [string, string, string][]) => ({
      [`${name}/Chart.yaml`]: `apiVersion: v2\nname: ${name}\nversion: 0.1.0\ndependencies:\n${deps
        .map(
          ([dep, version, repository]) =>
            `  - name: ${dep}\n    version: ${version}\n    repository: ${repository}\n`,
        )
        .join('')}`,
    });
    await charts.commit({
      ...umbrella('over-tls', [['api', '0.3.0', tlsRegistry.url]]),
      ...umbrella('over-http', [['worker', '0.1.0', plainRegistry.url]]),
      ...umbrella('mixed', [
        ['api', '0.3.0', tlsRegistry.url],
        ['worker', '0.1.0', plainRegistry.url],
      ]),
    });
    generator = new ManifestGenerator(
      await CheckoutStore.create({
        cacheDir: path.join(dir, 'checkouts'),
        maxCacheBytes: 100e6,
        maxRepoBytes: 50e6,
        refCacheTtlMs: 60_000,
        gitTimeoutMs: 30_000,
        egress: LOCAL_GIT_EGRESS,
      }),
      {
        kustomizePath: obtainedTool('obtain-kustomize.sh'),
        helmPath: helm,
        charts: new ChartStore({
          runner: {
            helm,
            // This host's address is a private network, allowed by default; loopback stays denied.
            egress: egressPolicy({ denied: DEFAULT_DENIED_NETWORKS, allowed: '' }),
            scratchDir: path.join(dir, 'scratch'),
            timeoutMs: 60_000,
            maxBytes: 10e6,
          },
          dir: path.join(dir, 'charts'),
          maxCacheBytes: 100e6,
          resolutionTtlMs: 60_000,
        }),
        scratchDir: path.join(dir, 'scratch'),
        renderTimeoutMs: 60_000,
        cacheEntries: 100,
      },
    );
  }, 900_000);

  afterAll(async () => {
    await git?.close();
    await httpsRepo?.close();
    await tlsRegistry?.close();
    await plainRegistry?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const names = (out: { manifests: readonly string[] }) =>
    out.manifests.map((m) => (JSON.parse(m) as { metadata: { name: string } }).metadata.name).sort();
  const chartSource = (repoURL: string, chart: string, targetRevision: string) => ({
    repoURL,
    targetRevision,
    path: '',
    chart,
    helm: { releaseName: 'rel' },
  });
  const umbrella = (dirName: string, auth: Record<string, GitAuth>) =>
    generator.generate(
      { repoURL: charts.url, targetRevision: 'main', path: dirName, helm: { releaseName: 'rel' } },
      null,
      [],
      async (url) => (auth[url] ? credential(auth[url]) : null),
    );

  it('pulls from an HTTPS Helm repository through the CONNECT tunnel when the credential is insecure', async () => {
    const out = await generator.generate(
      chartSource(httpsRepo.url, 'web', '1.0.0'),
      credential({ username: 'team-a', password: REPO_PASS, insecure: true }),
    );
    expect(names(out)).toEqual(['rel-web']);
    expect(httpsRepo.requests.map((r) => r.path)).toContain('/charts/web-1.0.0.tgz');
  });

  it('verifies the certificate inside the tunnel unless the credential says insecure', async () => {
    await expect(
      generator.generate(
        chartSource(httpsRepo.url, 'web', '1.0.0'),
        credential({ username: 'team-a', password: REPO_PASS }),
      ),
    ).rejects.toThrow(/https:\/\/[^ ]+: Get .*(x509|failed to verify certificate)/);
  });

  it('checks the address of every tunnel: a redirect to loopback in another spelling is refused', async () => {
    const port = new URL(httpsRepo.url).port;
    httpsRepo.redirect('/index.yaml', `https://0x7f000001:${port}/index.yaml`);
    try {
      await expect(
        generator.generate(
          chartSource(httpsRepo.url, 'web', '>=1.0.0'),
          credential({ username: 'team-a', password: REPO_PASS, insecure: true }),
        ),
      ).rejects.toThrow(/resolves to 127\.0\.0\.1, a network the repo service may not reach/);
    } finally {
      httpsRepo.redirect('/index.yaml', '');
    }
  });

  it('pulls an OCI chart over HTTPS with an insecure credential', async () => {
    const out = await generator.generate(
      chartSource(tlsRegistry.url, 'api', '0.3.0'),
      credential({ username: 'team-a', password: OCI_PASS, insecure: true }),
    );
    expect(names(out)).toEqual(['rel-api']);
  });

  it("builds a git chart's OCI dependencies over HTTPS and over plain HTTP, each as its credential says", async () => {
    const overTls = await umbrella('over-tls', {
      [tlsRegistry.url]: { username: 'team-a', password: OCI_PASS, insecure: true },
    });
    expect(names(overTls)).toEqual(['rel-api']);
    const overHttp = await umbrella('over-http', {
      [plainRegistry.url]: { username: 'team-a', password: OCI_PASS, ociPlainHttp: true },
    });
    expect(names(overHttp)).toEqual(['rel-worker']);
  });

  it('refuses dependencies whose registries disagree on plain HTTP, before helm runs', async () => {
    await expect(
      umbrella('mixed', {
        [tlsRegistry.url]: { username: 'team-a', password: OCI_PASS, insecure: true },
        [plainRegistry.url]: { username: 'team-a', password: OCI_PASS, ociPlainHttp: true },
      }),
    ).rejects.toThrow(/dependency repositories disagree on --plain-http/);
  });
});
