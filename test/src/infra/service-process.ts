// Starts a built service (services/<name>/dist/main.js) as its own process, configured through the
// environment as in production, and waits for its "service started" log line (or, runServiceToExit,
// for its exit). The stories' harnesses
// (api, repo, sync, appset) and the services' own integration tests differ only in the settings they pass and the ports they read from that output.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface ServiceProcess {
  /** The process id (to read its CPU and memory from /proc). */
  pid: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

type ServiceName = 'api' | 'repo' | 'sync' | 'appset';

/** The built service's process, configured through the environment alone (plus PATH and HOME). */
function spawnService(name: ServiceName, env: Record<string, string>, args: string[]) {
  // From test/src/infra and test/dist/infra alike, three levels up is the repository root.
  const main = path.resolve(here, `../../../services/${name}/dist/main.js`);
  if (!existsSync(main))
    throw new Error(`${main} is missing: build first (npx turbo run build --filter=@capstan/${name}...)`);
  return spawn(process.execPath, [main, ...args], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      CAPSTAN_HTTP_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * Runs a built service to its end (`--migrate-only`, a refused configuration): its exit code and
 * everything it wrote. Killed, and the run fails, past `timeoutMs`.
 */
export async function runServiceToExit(
  name: ServiceName,
  env: Record<string, string>,
  args: string[],
  timeoutMs = 60_000,
): Promise<{ code: number | null; output: string }> {
  const child = spawnService(name, env, args);
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not exit within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

export async function startServiceProcess(
  name: ServiceName,
  env: Record<string, string>,
  args: string[] = [],
): Promise<ServiceProcess> {
  const child = spawnService(name, env, args);
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A process that never started must not outlive the attempt (it would hold ports and leases).
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start in time:\n${output}`));
    }, 60_000);
    child.stdout.on('data', () => {
      if (/service started/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${output}`));
    });
  });
  return {
    pid: child.pid!,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      // The service gives itself shutdown.timeout-ms (15 s) before exiting anyway: past twice that it
      // is stuck. It is killed so the suite can clean up, and the stop fails with what it printed.
      let timer: NodeJS.Timeout | undefined;
      const stuck = await Promise.race([
        exited.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), 30_000))),
      ]);
      clearTimeout(timer);
      if (stuck) {
        child.kill('SIGKILL');
        await exited;
        throw new Error(`${name} did not exit within 30 s of SIGTERM:\n${output.slice(-4000)}`);
      }
    },
  };
}

/** A number the service logged as `"<key>":<n>` (its listening ports). */
export function loggedPort(service: ServiceProcess, key: string): number {
  const m = new RegExp(`"${key}":(\\d+)`).exec(service.output());
  if (!m) throw new Error(`no ${key} in the service's output:\n${service.output()}`);
  return Number(m[1]);
}
