// Starts the real repo service as its own process (services/repo/dist/main.js, configured through
// the environment as in production: mutual TLS with the run's PKI, the api's delegation public key)
// and gives stories a gRPC client and everything it logged. `actor` is proved the way the api proves
// it: a delegation signed with the api's key for the calling service and for repo.
import { createPrivateKey, randomBytes, randomUUID } from 'node:crypto';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import {
  testPki,
  type ServiceName,
  type TestPki,
  loggedPort,
  startServiceProcess,
} from '../src/infra/index.js';
import { repov1, unary, type UnaryMethod } from '@capstan/proto';
import type { TestBus } from '@capstan/test/infra';

export interface RepoProcess {
  grpcAddress: string;
  client: repov1.RepoServiceClient;
  /** Calls a method as the api would, forwarding `actor`. */
  call<Req, Res>(
    method: UnaryMethod<Req, Res>,
    request: Req,
    opts?: { actor?: string; token?: string; service?: 'api' | 'sync' | 'appset'; rawActor?: string },
  ): Promise<Res>;
  /** The run's PKI (its tls env for other processes, its delegation key). */
  pki: TestPki;
  /** The token of `service` (for calls made on purpose without the harness's call()). */
  serviceToken(service: 'api' | 'sync' | 'appset'): string;
  /** A client of `service` (its certificate), or one without a client certificate. */
  clientAs(service: ServiceName | 'none'): repov1.RepoServiceClient;
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
  const pki = await testPki();
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
    // The test git server listens on this host, which the default egress policy denies.
    CAPSTAN_EGRESS_ALLOWED_NETWORKS: '127.0.0.1',
    CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY: pki.delegation.publicKeyPem,
    ...pki.env('repo'),
    ...opts.env,
  });
  const grpcAddress = `127.0.0.1:${loggedPort(service, 'grpcPort')}`;
  const channel = (service: ServiceName) => {
    const m = pki.material(service);
    return credentials.createSsl(m.ca, m.key, m.cert);
  };
  const clients = new Map<string, repov1.RepoServiceClient>();
  const clientAs = (service: ServiceName | 'none') => {
    let c = clients.get(service);
    if (!c) {
      c = new repov1.RepoServiceClient(
        grpcAddress,
        service === 'none' ? credentials.createSsl(pki.material('repo').ca) : channel(service),
      );
      clients.set(service, c);
    }
    return c;
  };
  const client = clientAs('api');
  const signer = createPrivateKey(pki.delegation.privateKeyPem);
  return {
    grpcAddress,
    client,
    pki,
    clientAs,
    serviceToken: (service) => tokens[service],
    async call(method, request, callOpts = {}) {
      const service = callOpts.service ?? 'api';
      const md = new Metadata();
      md.set('authorization', `Bearer ${callOpts.token ?? tokens[service]}`);
      if (callOpts.actor)
        md.set(
          'capstan-delegation',
          await new SignJWT({ hld: service, kind: 'user' })
            .setProtectedHeader({ alg: 'EdDSA', typ: 'capstan-delegation+jwt' })
            .setIssuer('capstan-api')
            .setSubject(callOpts.actor.replace(/^user:/, ''))
            .setAudience('repo')
            .setJti(randomUUID())
            .setIssuedAt()
            .setExpirationTime('60s')
            .sign(signer),
        );
      if (callOpts.rawActor) md.set('x-capstan-actor', callOpts.rawActor);
      // The call goes out on the calling service's own channel (its client certificate).
      const c = clientAs(service);
      return unary(method.bind(c), request, { metadata: md, timeoutMs: 60_000 });
    },
    output: service.output,
    async metrics() {
      const res = await fetch(`http://127.0.0.1:${loggedPort(service, 'opsPort')}/metrics`);
      return res.text();
    },
    async stop() {
      for (const c of clients.values()) c.close();
      await service.stop();
    },
  };
}

export function grpcError(err: unknown): { code: number; details: string } {
  const e = err as ServiceError;
  return { code: e.code, details: e.details };
}
