// Each service from process spawn to a 200 on /readyz (configuration, migrations, bus provisioning,
// consumers). Issue 2's goal: every service starts and is ready in under 2 s. The first start of each
// service on a fresh database includes its migrations; the later ones are the usual restart.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyringJson } from '@capstan/sealing';
import { createTestBus, createTestDatabase } from '@capstan/test/infra';
import { report, summarize, type Figure } from './harness.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const RESTARTS = 5;

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

const token = () => randomBytes(32).toString('base64url');

async function timeToReady(service: string, env: Record<string, string>): Promise<number> {
  const opsPort = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, `services/${service}/dist/main.js`)], {
    env: {
      PATH: process.env.PATH ?? '',
      ...env,
      CAPSTAN_HTTP_PORT: String(opsPort),
      CAPSTAN_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += String(d)));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${service} exited: ${stderr.trim()}`);
      try {
        const res = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
        if (res.status === 200) return performance.now() - started;
      } catch {
        // not listening yet
      }
      if (performance.now() - started > 30_000)
        throw new Error(`${service} not ready after 30 s: ${stderr.trim()}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
  }
}

export async function main(): Promise<void> {
  const [tdb, tbus] = await Promise.all([createTestDatabase('capstan_bench'), createTestBus('startup')]);
  const cacheDir = mkdtempSync(join(tmpdir(), 'capstan-startup-'));
  const [apiGrpc, apiHttp, repoGrpc] = await Promise.all([freePort(), freePort(), freePort()]);
  const tokens = { syncToApi: token(), apiToRepo: token(), syncToRepo: token() };
  const common = { DATABASE_URL: tdb.url };
  const envs: Record<string, Record<string, string>> = {
    repo: {
      ...common,
      ...tbus.env('repo'),
      CAPSTAN_GRPC_PORT: String(repoGrpc),
      CAPSTAN_AUTH_SERVICE_TOKENS: `api=${tokens.apiToRepo},sync=${tokens.syncToRepo}`,
      CAPSTAN_CREDENTIALS_ENCRYPTION_KEYS: generateKeyringJson(),
      CAPSTAN_CACHE_DIR: cacheDir,
      // The test git server listens on this host, which the default egress policy denies.
      CAPSTAN_EGRESS_ALLOWED_NETWORKS: '127.0.0.1',
    },
    api: {
      ...common,
      ...tbus.env('api'),
      CAPSTAN_GRPC_PORT: String(apiGrpc),
      CAPSTAN_API_HTTP_PORT: String(apiHttp),
      CAPSTAN_AUTH_SIGNING_KEY: randomBytes(32).toString('base64'),
      CAPSTAN_ADMIN_PASSWORD: token(),
      CAPSTAN_SERVICE_TOKENS: `sync=${tokens.syncToApi}`,
      CAPSTAN_API_ENCRYPTION_KEYS: generateKeyringJson(),
      CAPSTAN_REPO_ADDRESS: `127.0.0.1:${repoGrpc}`,
      CAPSTAN_REPO_SERVICE_TOKEN: tokens.apiToRepo,
    },
    sync: {
      ...common,
      ...tbus.env('sync'),
      CAPSTAN_APPLICATION_SYNC_IMPERSONATION_ENABLED: 'true',
      CAPSTAN_API_ADDRESS: `127.0.0.1:${apiGrpc}`,
      CAPSTAN_API_SERVICE_TOKEN: tokens.syncToApi,
      CAPSTAN_REPO_ADDRESS: `127.0.0.1:${repoGrpc}`,
      CAPSTAN_REPO_SERVICE_TOKEN: tokens.syncToRepo,
    },
    appset: { ...common, ...tbus.env('appset') },
  };
  const figures: Figure[] = [];
  try {
    for (const [service, env] of Object.entries(envs)) {
      const first = await timeToReady(service, env);
      const restarts: number[] = [];
      for (let i = 0; i < RESTARTS; i++) restarts.push(await timeToReady(service, env));
      const s = summarize(restarts);
      figures.push(
        {
          name: `${service}: first start (migrations)`,
          value: Math.round(first),
          unit: 'ms',
          goal: '< 2000',
          met: first < 2000,
        },
        {
          name: `${service}: restart p50`,
          value: Math.round(s.p50),
          unit: 'ms',
          goal: '< 2000',
          met: s.p50 < 2000,
        },
        {
          name: `${service}: restart max`,
          value: Math.round(Math.max(...restarts)),
          unit: 'ms',
          goal: '< 2000',
          met: Math.max(...restarts) < 2000,
        },
      );
    }
    report('service-startup', figures, {
      restarts: RESTARTS,
      measured: 'spawn of node dist/main.js -> first 200 from /readyz',
    });
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
    await Promise.all([tdb.drop(), tbus.cleanup()]);
  }
}
