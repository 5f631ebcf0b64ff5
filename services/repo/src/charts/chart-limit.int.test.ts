// chart.max-bytes against the real helm and a real Helm repository (node:http with basic auth,
// archives made by `helm package`): a chart whose archive is larger than the bound is refused with a
// clear error naming the setting, the connections cut while helm downloads (through the run's
// egress proxy); a chart under the bound from the same repository is pulled, and nothing of the
// refused one is kept.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChartRepository, type ChartRepositoryServer } from '@capstan/test/charts';
import { DEFAULT_DENIED_NETWORKS, egressPolicy } from '../checkouts/egress.js';
import { ChartStore } from './chart-store.js';
import { ManifestRenderError } from '../manifests/manifest-errors.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const helm = () =>
  execFileSync('bash', [path.resolve(here, '../../../../test/scripts/obtain-helm.sh'), '--print-path'], {
    encoding: 'utf8',
  }).trim();

const MAX_BYTES = 256 * 1024;
const PASSWORD = 'chart-limit-pass';

describe('chart.max-bytes: a chart larger than the bound is refused', () => {
  let dir: string;
  let repo: ChartRepositoryServer;
  let charts: ChartStore;
  const credential = { id: 'cred-1', version: '1', auth: { username: 'team-a', password: PASSWORD } };
  const pull = (chart: string) =>
    charts.pull({
      url: repo.url,
      chart,
      version: '1.0.0',
      credential,
      passCredentials: false,
      what: `chart ${chart} of ${repo.url}`,
    });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'capstan-chart-limit-'));
    repo = await startChartRepository({
      helm: helm(),
      dir: path.join(dir, 'repo'),
      users: { 'team-a': PASSWORD },
      charts: [
        { name: 'small', version: '1.0.0' },
        // Random bytes do not compress: the archive is about 1 MiB, four times the bound.
        {
          name: 'big',
          version: '1.0.0',
          files: { 'files/blob.txt': randomBytes(768 * 1024).toString('base64') },
        },
      ],
    });
    charts = new ChartStore({
      runner: {
        helm: helm(),
        // The repository listens on this host's address (a private network, allowed by default).
        egress: egressPolicy({ denied: DEFAULT_DENIED_NETWORKS, allowed: '' }),
        scratchDir: path.join(dir, 'scratch'),
        timeoutMs: 60_000,
        maxBytes: MAX_BYTES,
      },
      dir: path.join(dir, 'charts'),
      maxCacheBytes: 100e6,
      resolutionTtlMs: 60_000,
    });
  }, 600_000);
  afterAll(async () => {
    await repo?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('pulls a chart under the bound', async () => {
    const small = await pull('small');
    expect(small.version).toBe('1.0.0');
    small.release();
  });

  it('refuses a chart over the bound with an error naming chart.max-bytes, and keeps nothing of it', async () => {
    const err = await pull('big').then(
      () => undefined,
      (e: unknown) => e,
    );
    // A render error: the sync fails with this message, not retried as an outage.
    expect(err).toBeInstanceOf(ManifestRenderError);
    expect((err as Error).message).toBe(
      `chart big of ${repo.url}: helm downloaded more than ${MAX_BYTES} bytes (chart.max-bytes)`,
    );
    // helm asked for the archive; the proxy cut it.
    expect(repo.requests.some((r) => r.path === '/charts/big-1.0.0.tgz')).toBe(true);
    expect([...charts.pulls.keys()].some((k) => k.includes('"big"'))).toBe(false);
    const kept = await readdir(path.join(dir, 'charts'));
    expect(kept.filter((d) => d.startsWith('.pull-'))).toEqual([]);
    // The small chart is still served from the cache: one network pull in all.
    const again = await pull('small');
    again.release();
    expect([...charts.pulls.values()]).toEqual([1]);
  });
});
