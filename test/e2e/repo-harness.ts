// Starts the real repo service as its own process (services/repo/dist/main.js, configured through
// the environment as in production) and gives stories a gRPC client and everything it logged.
import { randomBytes } from 'node:crypto';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { repov1, unary, type UnaryMethod } from '@capstan/proto';
import { loggedPort, startServiceProcess } from './service-process.js';
import type { TestBus } from '@capstan/test/infra';

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
  /** The test bus; the service connects as its own bus user. */
  bus: TestBus;
  cacheDir: string;
  env?: Record<string, string>;
}): Promise<RepoProcess> {
  const tokens = {
    api: randomBytes(24).toString('hex'),
    sync: randomBytes(24).toString('hex'),
    appset: randomBytes(24).toString('hex'),
  };
  const keyring = JSON.stringify({ active: 'k1', keys: { k1: randomBytes(32).toString('base64') } });
  const service = await startServiceProcess('repo', {
    ...(process.env.CAPSTAN_CACHE ? { CAPSTAN_CACHE: process.env.CAPSTAN_CACHE } : {}),
    DATABASE_URL: opts.databaseUrl,
    ...opts.bus.env('repo'),
    CAPSTAN_GRPC_PORT: '0',
    CAPSTAN_LOG_LEVEL: 'debug',
    CAPSTAN_AUTH_SERVICE_TOKENS: Object.entries(tokens)
      .map(([s, t]) => `${s}=${t}`)
      .join(','),
    CAPSTAN_CREDENTIALS_ENCRYPTION_KEYS: keyring,
    CAPSTAN_CACHE_DIR: opts.cacheDir,
    ...opts.env,
  });
  const grpcAddress = `127.0.0.1:${loggedPort(service, 'grpcPort')}`;
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
    output: service.output,
    async metrics() {
      const res = await fetch(`http://127.0.0.1:${loggedPort(service, 'opsPort')}/metrics`);
      return res.text();
    },
    async stop() {
      client.close();
      await service.stop();
    },
  };
}

export function grpcError(err: unknown): { code: number; details: string } {
  const e = err as ServiceError;
  return { code: e.code, details: e.details };
}
