// The web UI's budgets (issue 14), measured, not asserted: the initial JavaScript gzipped (what
// index.html loads before the first page: its entry script and the modules it preloads), the first
// render of the Applications list with 1,000 Applications in headless Chromium (navigation start
// to "1000 of 1000 Applications" on screen, the list fetched through the api), and the live
// progress latency (an event published on the bus as the sync service would, to the change visible
// on the Application's page through the api's stream). The api runs as its own process
// (services/api/dist/main.js, serving ui/dist) on real PostgreSQL and NATS; Debian's chromium
// (test/scripts/obtain-chromium.sh) through playwright-core. Goals: ≤ 300 KB, ≤ 1 s, ≤ 500 ms.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium, type Page } from 'playwright-core';
import { connectBus, newEvent, syncStatusChanged } from '@capstan/events';
import { createTestBus, createTestDatabase } from '@capstan/test/infra';
import { generateKeyringJson } from '@capstan/sealing';
import { report, summarize } from './harness.js';

const APPS = 1000;
const RENDERS = 5;
const LIVE_ROUNDS = 10;
const PASSWORD = 'bench-admin-password';
// The probes are evaluated as strings (the page's policy refuses eval without bypassCSP).
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const uiDist = join(root, 'ui', 'dist');

/** Gzipped bytes of the scripts index.html loads at once (entry + modulepreload), as served. */
export function initialJsGzipBytes(dist = uiDist): { bytes: number; files: string[] } {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const files = [
    ...html.matchAll(/<script[^>]+src="([^"]+\.js)"/g),
    ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+\.js)"/g),
  ].map((m) => m[1]!);
  const bytes = files.reduce((sum, f) => sum + gzipSync(readFileSync(join(dist, f))).length, 0);
  return { bytes, files };
}

async function startApi(env: Record<string, string>) {
  const child = spawn(process.execPath, [join(root, 'services/api/dist/main.js')], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const httpPort = await new Promise<number>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`api did not start:\n${output}`)), 60_000);
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
      const m = /"httpPort":(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        ok(Number(m[1]));
      }
    });
    child.on('exit', (code) => fail(new Error(`api exited with ${code}:\n${output}`)));
  });
  return {
    url: `http://127.0.0.1:${httpPort}`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function seed(url: string): Promise<void> {
  const call = async (method: string, path: string, token: string | undefined, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { token?: string };
  };
  const { token } = await call('POST', '/api/v1/session', undefined, {
    username: 'admin',
    password: PASSWORD,
  });
  for (let p = 0; p < 10; p++) {
    await call('POST', '/api/v1/projects', token, {
      project: {
        metadata: { name: `team-${p}` },
        spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
      },
    });
  }
  for (let i = 0; i < APPS; i++) {
    await call('POST', '/api/v1/applications', token, {
      application: {
        metadata: { name: `app-${String(i).padStart(4, '0')}` },
        spec: {
          project: `team-${i % 10}`,
          source: { repoURL: 'https://git.example.com/apps.git', path: `app-${i}`, targetRevision: 'HEAD' },
          destination: { server: 'https://kubernetes.default.svc', namespace: `ns-${i % 25}` },
        },
      },
    });
  }
}

async function firstRenders(page: Page, url: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < RENDERS; i++) {
    await page.goto(`${url}/applications`, { waitUntil: 'commit' });
    await page.waitForFunction(`document.body.innerText.includes('${APPS} of ${APPS} Applications')`, null, {
      polling: 'raf',
      timeout: 30_000,
    });
    out.push(await page.evaluate<number>('performance.now()'));
  }
  return out;
}

async function liveLatencies(page: Page, url: string, publish: (revision: string) => Promise<void>) {
  await page.goto(`${url}/applications/argocd/app-0000`);
  await page.getByText('live', { exact: true }).waitFor();
  const out: number[] = [];
  for (let i = 0; i < LIVE_ROUNDS; i++) {
    const revision = randomBytes(20).toString('hex');
    // The page notes the wall-clock time the new revision appears (same machine, same clock).
    await page.evaluate(`window.__seen = new Promise((ok) => {
      const o = new MutationObserver(() => { if (document.body.innerText.includes('${revision.slice(0, 12)}')) { o.disconnect(); ok(Date.now()); } });
      o.observe(document.body, { subtree: true, childList: true, characterData: true });
    }); 0`);
    const published = Date.now();
    await publish(revision);
    const seen = await page.evaluate<number>(
      'Promise.race([window.__seen, new Promise((r) => setTimeout(() => r(0), 15000))])',
    );
    if (!seen) throw new Error(`revision ${revision} not shown within 15 s`);
    out.push(seen - published);
  }
  return out;
}

export async function main(): Promise<void> {
  const initial = initialJsGzipBytes();
  const db = await createTestDatabase('capstan_bench_ui');
  const bus = await createTestBus('benchui');
  const api = await startApi({
    DATABASE_URL: db.url,
    ...bus.env('api'),
    CAPSTAN_GRPC_PORT: '0',
    CAPSTAN_API_HTTP_PORT: '0',
    CAPSTAN_HTTP_PORT: '0',
    CAPSTAN_LOG_LEVEL: 'info',
    CAPSTAN_ADMIN_PASSWORD: PASSWORD,
    CAPSTAN_API_ENCRYPTION_KEYS: generateKeyringJson(),
  });
  const sync = await connectBus({ ...bus.connection('sync'), service: 'sync' });
  const browser = await chromium.launch({
    executablePath: process.env.CAPSTAN_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  try {
    await seed(api.url);
    const page = await (
      await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 800 } })
    ).newPage();
    await page.goto(api.url);
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Applications' }).waitFor();
    const renders = summarize(await firstRenders(page, api.url));
    const live = summarize(
      await liveLatencies(page, api.url, async (revision) => {
        await sync.publish(
          newEvent(
            syncStatusChanged.type,
            {
              application: { name: 'app-0000', namespace: 'argocd' },
              sync: { status: 'Synced', revision },
              health: { status: 'Healthy' },
              resources: [],
              reconciledAt: new Date().toISOString(),
            },
            { subject: 'applications/argocd/app-0000', actor: 'service:sync', source: 'capstan/sync' },
          ),
        );
      }),
    );
    report(
      'ui',
      [
        {
          name: 'initial JS (gzip)',
          value: Math.round(initial.bytes / 1024),
          unit: 'KB',
          goal: '≤ 300',
          met: initial.bytes <= 300 * 1024,
        },
        {
          name: `first render, ${APPS} apps, p50`,
          value: renders.p50,
          unit: 'ms',
          goal: '≤ 1000',
          met: renders.p50 <= 1000,
        },
        { name: `first render, ${APPS} apps, max`, value: renders.p99, unit: 'ms' },
        {
          name: 'live progress latency p50',
          value: live.p50,
          unit: 'ms',
          goal: '≤ 500',
          met: live.p50 <= 500,
        },
        {
          name: 'live progress latency max',
          value: live.p99,
          unit: 'ms',
          goal: '≤ 500',
          met: live.p99 <= 500,
        },
      ],
      { initialFiles: initial.files, renders: RENDERS, liveRounds: LIVE_ROUNDS, browser: browser.version() },
    );
  } finally {
    await browser.close();
    await sync.close();
    await api.stop();
    await bus.cleanup();
    await db.drop();
  }
}
