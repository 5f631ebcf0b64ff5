// Starts the real api as its own process (services/api/dist/main.js, configured through the
// environment as in production) and runs the real `capstan` CLI (cli/bin/capstan.js) against it.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const apiMain = path.resolve(here, '../../services/api/dist/main.js');
export const capstanBin = path.resolve(here, '../../cli/bin/capstan.js');

export interface ApiProcess {
  grpcAddress: string;
  httpUrl: string;
  /** The bootstrap admin password the api printed once on first start. */
  adminPassword: string;
  syncToken: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startApiProcess(opts: {
  databaseUrl: string;
  natsUrl: string;
  namespace: string;
  env?: Record<string, string>;
}): Promise<ApiProcess> {
  if (!existsSync(apiMain))
    throw new Error(`${apiMain} is missing: build first (npx turbo run build --filter=@capstan/api...)`);
  const syncToken = randomBytes(24).toString('hex');
  const child: ChildProcess = spawn(process.execPath, [apiMain], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      DATABASE_URL: opts.databaseUrl,
      NATS_URL: opts.natsUrl,
      CAPSTAN_BUS_NAMESPACE: opts.namespace,
      CAPSTAN_GRPC_PORT: '0',
      CAPSTAN_API_HTTP_PORT: '0',
      CAPSTAN_HTTP_PORT: '0',
      CAPSTAN_LOG_LEVEL: 'info',
      CAPSTAN_SERVICE_TOKENS: `sync=${syncToken}`,
      CAPSTAN_API_ENCRYPTION_KEYS: JSON.stringify({
        active: 'k1',
        keys: { k1: randomBytes(32).toString('base64') },
      }),
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const ports = await new Promise<{ grpc: number; http: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`api did not start in time:\n${output}`)), 60_000);
    const check = () => {
      const m = /"grpcPort":(\d+),"httpPort":(\d+)/.exec(output);
      if (m && /service started/.test(output)) {
        clearTimeout(timer);
        resolve({ grpc: Number(m[1]), http: Number(m[2]) });
      }
    };
    child.stdout?.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`api exited with ${code}:\n${output}`));
    });
  });
  const adminPassword = /password: (\S+)/.exec(output)?.[1] ?? opts.env?.CAPSTAN_ADMIN_PASSWORD ?? '';
  return {
    grpcAddress: `127.0.0.1:${ports.grpc}`,
    httpUrl: `http://127.0.0.1:${ports.http}`,
    adminPassword,
    syncToken,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `capstan <args>` with its own contexts file; `input` goes to stdin (passwords). */
export function capstan(
  configFile: string,
  args: string[],
  input?: string,
  env: Record<string, string> = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [capstanBin, ...args],
      {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/root',
          CAPSTAN_CONFIG: configFile,
          ...env,
        },
        timeout: 60_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input ?? '');
  });
}
