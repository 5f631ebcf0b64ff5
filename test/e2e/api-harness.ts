// Starts the real api as its own process (services/api/dist/main.js, configured through the
// environment as in production) and runs the real `capstan` CLI (cli/bin/capstan.js) against it.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loggedPort, startServiceProcess } from './service-process.js';
import { testPki } from '../src/infra/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const capstanBin = path.resolve(here, '../../cli/bin/capstan.js');

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
  const syncToken = randomBytes(24).toString('hex');
  const pki = await testPki();
  const service = await startServiceProcess('api', {
    DATABASE_URL: opts.databaseUrl,
    NATS_URL: opts.natsUrl,
    CAPSTAN_BUS_NAMESPACE: opts.namespace,
    CAPSTAN_GRPC_PORT: '0',
    CAPSTAN_API_HTTP_PORT: '0',
    CAPSTAN_LOG_LEVEL: 'info',
    CAPSTAN_SERVICE_TOKENS: `sync=${syncToken}`,
    CAPSTAN_API_ENCRYPTION_KEYS: JSON.stringify({
      active: 'k1',
      keys: { k1: randomBytes(32).toString('base64') },
    }),
    // The gRPC port speaks TLS (services present their certificates); the run's delegation key.
    ...pki.env('api'),
    CAPSTAN_AUTH_DELEGATION_KEY: pki.delegation.privateKeyPem,
    ...opts.env,
  });
  const adminPassword =
    /password: (\S+)/.exec(service.output())?.[1] ?? opts.env?.CAPSTAN_ADMIN_PASSWORD ?? '';
  return {
    grpcAddress: `127.0.0.1:${loggedPort(service, 'grpcPort')}`,
    httpUrl: `http://127.0.0.1:${loggedPort(service, 'httpPort')}`,
    adminPassword,
    syncToken,
    output: service.output,
    stop: service.stop,
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `capstan <args>` with its own contexts file; `input` goes to stdin (passwords). The CLI
 * trusts the run's CA for the api's TLS (CAPSTAN_SERVER_CRT).
 */
export async function capstan(
  configFile: string,
  args: string[],
  input?: string,
  env: Record<string, string> = {},
): Promise<CliResult> {
  const { caFile } = await testPki();
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [capstanBin, ...args],
      {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/root',
          CAPSTAN_CONFIG: configFile,
          CAPSTAN_SERVER_CRT: caFile,
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
