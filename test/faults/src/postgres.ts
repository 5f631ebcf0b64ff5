// The fault suite's own PostgreSQL: a cluster made by initdb in a temporary directory, started and
// stopped (or killed) by the suite, so a scenario may restart it or take it away without touching
// the machine's shared server. initdb and postgres refuse to run as root: as root they run as the
// `postgres` user.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface OwnPostgres {
  url(database?: string): string;
  port: number;
  /** SIGKILL the postmaster (a crash: recovery on the next start). */
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(path.join(tmpdir(), 'capstan-faults-pg-'));
  const data = path.join(dir, 'data');
  if (process.getuid?.() === 0) {
    chmodSync(dir, 0o755);
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dir, uid, gid);
  }
  const [initCmd, initArgs] = asPostgres('initdb', [
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
  ]);
  execFileSync(initCmd, initArgs, { stdio: 'ignore' });
  const port = await freePort();
  let child: ChildProcess | undefined;
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const ready = async () => {
    for (let i = 0; i < 200; i++) {
      const c = new pg.Client({ connectionString: url() });
      try {
        await c.connect();
        await c.end();
        return;
      } catch {
        await c.end().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error(`own postgres on ${port} did not start`);
  };
  const own: OwnPostgres = {
    url,
    port,
    async start() {
      const [cmd, args] = asPostgres('postgres', [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'max_connections=200',
      ]);
      child = spawn(cmd, args, { stdio: 'ignore', detached: true });
      await ready();
    },
    async kill() {
      if (!child?.pid) return;
      const exited = new Promise((r) => child!.once('exit', r));
      // The process group: runuser and the postmaster (its backends die with it).
      process.kill(-child.pid, 'SIGKILL');
      await exited;
      child = undefined;
    },
    async stop() {
      if (!child?.pid) return;
      const exited = new Promise((r) => child!.once('exit', r));
      process.kill(-child.pid, 'SIGINT');
      await exited;
      child = undefined;
    },
  };
  await own.start();
  process.once('exit', () => {
    if (child?.pid) process.kill(-child.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return own;
}
