// Starts the real repo service as its own process (services/repo/dist/main.js, configured through
// the environment as in production) and gives stories a gRPC client and everything it logged.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { repov1, unary, type UnaryMethod } from '@capstan/proto';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoMain = path.resolve(here, '../../services/repo/dist/main.js');

export interface RepoProcess {
  grpcAddress: string;
  client: repov1.RepoServiceClient;
  /** Calls a method as the api would, forwarding `actor`. */
  call<Req, Res>(
    method: UnaryMethod<Req, Res>,
    request: Req,
    opts?: { actor?: string; token?: string; service?: 'api' | 'sync' | 'appset' },
  ): Promise<Res>;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** The Prometheus text from the ops endpoint. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

export async function startRepoProcess(opts: {
  databaseUrl: string;
  natsUrl: string;
  namespace: string;
  cacheDir: string;
  env?: Record<string, string>;
}): Promise<RepoProcess> {
  if (!existsSync(repoMain))
    throw new Error(`${repoMain} is missing: build first (npx turbo run build --filter=@capstan/repo...)`);
  const tokens = {
    api: randomBytes(24).toString('hex'),
    sync: randomBytes(24).toString('hex'),
    appset: randomBytes(24).toString('hex'),
  };
  const keyring = JSON.stringify({ active: 'k1', keys: { k1: randomBytes(32).toString('base64') } });
  const child: ChildProcess = spawn(process.execPath, [repoMain], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      ...(process.env.CAPSTAN_CACHE ? { CAPSTAN_CACHE: process.env.CAPSTAN_CACHE } : {}),
      DATABASE_URL: opts.databaseUrl,
      NATS_URL: opts.natsUrl,
      CAPSTAN_BUS_NAMESPACE: opts.namespace,
      CAPSTAN_GRPC_PORT: '0',
      CAPSTAN_HTTP_PORT: '0',
      CAPSTAN_LOG_LEVEL: 'debug',
      CAPSTAN_AUTH_SERVICE_TOKENS: Object.entries(tokens)
        .map(([s, t]) => `${s}=${t}`)
        .join(','),
      CAPSTAN_CREDENTIALS_ENCRYPTION_KEYS: keyring,
      CAPSTAN_CACHE_DIR: opts.cacheDir,
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const grpcPort = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`repo service did not start in time:\n${output}`)),
      60_000,
    );
    const check = () => {
      const m = /"grpcPort":(\d+)/.exec(output);
      if (m && /service started/.test(output)) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout?.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`repo service exited with ${code}:\n${output}`));
    });
  });
  const grpcAddress = `127.0.0.1:${grpcPort}`;
  const client = new repov1.RepoServiceClient(grpcAddress, credentials.createInsecure());
  return {
    grpcAddress,
    client,
    call(method, request, callOpts = {}) {
      const md = new Metadata();
      md.set('authorization', `Bearer ${callOpts.token ?? tokens[callOpts.service ?? 'api']}`);
      if (callOpts.actor) md.set('x-capstan-actor', callOpts.actor);
      return unary(method.bind(client), request, { metadata: md, timeoutMs: 60_000 });
    },
    output: () => output,
    async metrics() {
      const opsPort = /"opsPort":(\d+)/.exec(output)?.[1];
      const res = await fetch(`http://127.0.0.1:${opsPort}/metrics`);
      return res.text();
    },
    async stop() {
      client.close();
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export function grpcError(err: unknown): { code: number; details: string } {
  const e = err as ServiceError;
  return { code: e.code, details: e.details };
}
