// Capstan's authenticated NATS for tests: one nats-server per machine, started by the first test that
// needs it and shared by every later one (vitest workers, packages, runs), with the users and subject
// permissions of @capstan/bus-auth. Its state lives in ~/.cache/capstan/nats-test (config and
// credentials mode 600); a lock directory makes parallel workers start it once. Each test still gets
// its own namespace (the first subject token), which the permissions leave open (`*`).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { busUsers, generatePasswords, renderNatsConfig, type BusUser } from '@capstan/bus-auth';
import { dockerAvailable } from './docker.js';

/** The users of the test server: every service, two external sources, and admin (cleanup, tests). */
export const TEST_EXT_SOURCES = ['git', 'ci'] as const;

export interface NatsServer {
  url: string;
  /** Password by user; empty when the server (NATS_URL without credentials) has no authentication. */
  passwords: Record<string, string>;
}

function testUsers(): BusUser[] {
  return busUsers({ namespace: '*', extSources: TEST_EXT_SOURCES, admin: true });
}

function stateDir(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'capstan', 'nats-test');
}

function natsServerBinary(): string | undefined {
  const candidates = [
    process.env.NATS_SERVER_BIN,
    ...(process.env.PATH ?? '').split(delimiter).map((d) => d && join(d, 'nats-server')),
    '/usr/sbin/nats-server',
    '/usr/local/bin/nats-server',
  ];
  for (const c of candidates) {
    if (!c) continue;
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // next
    }
  }
  return undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Mutual exclusion across processes: a directory that holds its owner's pid; a dead owner's is taken over. */
async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = join(dir, 'lock');
  for (let i = 0; ; i++) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      let owner = 0;
      try {
        owner = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        // being created or removed
      }
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0;
      const stale = owner > 0 ? !alive(owner) : Date.now() - since > 30_000;
      if (stale) rmSync(lock, { recursive: true, force: true });
      else if (i > 600) throw new Error(`timed out waiting for the lock ${lock}`);
      else await sleep(100);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

interface State {
  pid: number;
  port: number;
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

function writeSecret(path: string, content: string): void {
  writeFileSync(path, content, { mode: 0o600 });
}

async function startLocal(bin: string): Promise<NatsServer> {
  const dir = stateDir();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return withLock(dir, async () => {
    const users = testUsers();
    const credentialsFile = join(dir, 'credentials.json');
    let passwords = readJson<Record<string, string>>(credentialsFile) ?? {};
    if (!users.every((u) => passwords[u.user])) {
      passwords = { ...generatePasswords(users.map((u) => u.user)), ...passwords };
      writeSecret(credentialsFile, JSON.stringify(passwords, null, 2));
    }
    const state = readJson<State>(join(dir, 'server.json'));
    const configFile = join(dir, 'nats.conf');
    const render = (port: number) =>
      renderNatsConfig({
        host: '127.0.0.1',
        port,
        storeDir: join(dir, 'jetstream'),
        users,
        password: (u) => passwords[u]!,
        serverName: 'capstan-test',
      });
    if (state && alive(state.pid) && (await portAnswers(state.port))) {
      // Running: bring its users and permissions up to date (the table may have changed since).
      const config = render(state.port);
      if (!existsSync(configFile) || readFileSync(configFile, 'utf8') !== config) {
        writeSecret(configFile, config);
        process.kill(state.pid, 'SIGHUP');
        await sleep(300);
      }
      return { url: `nats://127.0.0.1:${state.port}`, passwords };
    }
    const port = await freePort();
    writeSecret(configFile, render(port));
    const log = openSync(join(dir, 'nats.log'), 'a');
    const child = spawn(bin, ['-c', configFile], { detached: true, stdio: ['ignore', log, log] });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${bin}`);
    writeFileSync(join(dir, 'server.json'), JSON.stringify({ pid: child.pid, port } satisfies State));
    for (let i = 0; i < 100 && !(await portAnswers(port)); i++) await sleep(100);
    if (!(await portAnswers(port)))
      throw new Error(`nats-server did not start on 127.0.0.1:${port}; see ${join(dir, 'nats.log')}`);
    return { url: `nats://127.0.0.1:${port}`, passwords };
  });
}

async function startContainer(): Promise<NatsServer> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const users = testUsers();
  const passwords = generatePasswords(users.map((u) => u.user));
  const config = renderNatsConfig({
    host: '0.0.0.0',
    port: 4222,
    storeDir: '/data',
    users,
    password: (u) => passwords[u]!,
  });
  const container = await new GenericContainer('nats:2.11-alpine')
    .withCopyContentToContainer([{ content: config, target: '/etc/nats/capstan.conf', mode: 0o600 }])
    .withCommand(['-c', '/etc/nats/capstan.conf'])
    .withExposedPorts(4222)
    .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
    .start();
  return { url: `nats://${container.getHost()}:${container.getMappedPort(4222)}`, passwords };
}

let server: Promise<NatsServer> | undefined;

/**
 * The server tests use. NATS_URL names an external one (its passwords, by user, in the JSON file
 * CAPSTAN_TEST_NATS_CREDENTIALS, rendered from @capstan/bus-auth's test users; without it the
 * server is taken to have no authentication). Otherwise the local nats-server binary, or a
 * container where Docker is present and the binary is not.
 */
export function natsTestServer(): Promise<NatsServer> {
  server ??= (async () => {
    if (process.env.NATS_URL) {
      const file = process.env.CAPSTAN_TEST_NATS_CREDENTIALS;
      return { url: process.env.NATS_URL, passwords: file ? JSON.parse(readFileSync(file, 'utf8')) : {} };
    }
    const bin = natsServerBinary();
    if (bin) return startLocal(bin);
    if (!process.env.CAPSTAN_NO_TESTCONTAINERS && dockerAvailable()) return startContainer();
    throw new Error(
      'no nats-server binary (NATS_SERVER_BIN, PATH, /usr/sbin) and no Docker: run scripts/ensure-services.sh',
    );
  })();
  return server;
}

/** A random suffix, for tests that need throwaway names. */
export const randomToken = () => randomBytes(3).toString('hex');
