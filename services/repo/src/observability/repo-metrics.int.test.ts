// The repo service's git metrics after real clones and fetches from a real git server over HTTP
// with authentication, scraped from the services' ops server (libs/service) over HTTP.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  declaredMetrics,
  metricsOf,
  parseMetricsText,
  repoLabel,
  sampleValue,
  startOpsServer,
  type OpsServer,
} from '@capstan/service';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { CheckoutStore } from '../checkouts/checkout-store.js';
import { RepoMetrics } from './repo-metrics.js';
import { LOCAL_GIT_EGRESS } from '../test-support/egress.js';

const CANARY = 'canary-metrics-Jx7-never-visible';

describe('repo metrics after real git requests', () => {
  let server: GitServer;
  let cacheDir: string;
  let store: CheckoutStore;
  let repo: TestRepository;
  let ops: OpsServer;

  beforeAll(async () => {
    server = await startGitServer();
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'capstan-repo-metrics-'));
    const registry = new Registry();
    const metrics = new RepoMetrics(registry, () => 1234);
    store = await CheckoutStore.create({
      cacheDir,
      maxCacheBytes: 50 * 1024 * 1024,
      maxRepoBytes: 10 * 1024 * 1024,
      refCacheTtlMs: 0,
      gitTimeoutMs: 30_000,
      egress: LOCAL_GIT_EGRESS,
      observer: metrics,
    });
    repo = await server.createRepository('Team/Metered.git', {
      credentials: [{ username: 'team-a', password: CANARY }],
    });
    await repo.commit({ 'app/config.yaml': 'version: 1\n' });
    ops = await startOpsServer({
      host: '127.0.0.1',
      port: 0,
      registry,
      readiness: new Map(),
      isShuttingDown: () => false,
    });
  });
  afterAll(async () => {
    await ops?.close();
    await server?.close();
    await rm(cacheDir, { recursive: true, force: true });
  });

  const scrape = async () => {
    const res = await fetch(`http://127.0.0.1:${ops.port}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  };

  it('counts clone and fetch as Argo CD request_type="fetch", failures by repository and revision', async () => {
    const good = { username: 'team-a', password: CANARY };
    const credential = (auth: typeof good) => ({ id: 'c', version: '1', auth });
    await store.resolveRevision({ url: repo.url, revision: 'main', credential: credential(good) });
    await store.resolveRevision({ url: repo.url, revision: 'main', credential: credential(good) });
    await expect(
      store.resolveRevision({
        url: repo.url,
        revision: 'v-missing',
        credential: { id: 'bad', version: '1', auth: { username: 'team-a', password: 'wrong' } },
      }),
    ).rejects.toThrow();
    const text = await scrape();
    const samples = parseMetricsText(text);
    const label = repoLabel(repo.url);
    expect(label).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/team\/metered$/);
    expect(sampleValue(samples, 'capstan_git_request_total', { repo: label, request_type: 'fetch' })).toBe(3);
    expect(sampleValue(samples, 'capstan_git_request_duration_seconds_count', { repo: label })).toBe(3);
    expect(sampleValue(samples, 'capstan_git_fetch_fail_total', { repo: label, revision: 'v-missing' })).toBe(
      1,
    );
    expect(sampleValue(samples, 'capstan_git_fetch_fail_total', { repo: label, revision: 'main' })).toBe(0);
    expect(sampleValue(samples, 'capstan_repo_checkout_cache_bytes')).toBe(1234);
    expect(text).not.toContain(CANARY);
    const declared = declaredMetrics(text);
    for (const m of metricsOf('repo')) expect(declared.get(m.name), m.name).toBe(m.type);
  });

  it('labels a URL that carries a password with the URL alone', async () => {
    const withPassword = repo.url.replace('http://', `http://team-a:${CANARY}@`);
    await store.resolveRevision({ url: withPassword, revision: 'main', credential: null });
    const text = await scrape();
    expect(text).not.toContain(CANARY);
    expect(text).not.toContain('team-a@');
    expect(
      sampleValue(parseMetricsText(text), 'capstan_git_request_total', { repo: repoLabel(repo.url) }),
    ).toBe(4);
  });
});
