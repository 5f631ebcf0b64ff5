// Starts the real appset service as its own process (services/appset/dist/main.js, configured through
// the environment as in production: mutual TLS with the run's PKI, the api's delegation public key,
// its tokens towards api and repo). The api and appset call each other, so the appset's address is
// reserved first: start the api with `appset: { address, tokens }` (api-harness.ts), then appset
// with the api's address.
//
//   const appsetAddress = await reserveAppsetAddress();
//   const tokens = appsetTokens();
//   const api = await startApiProcess({ databaseUrl, bus, appset: { address: appsetAddress, tokens }, env });
//   const appset = await startAppsetProcess({ databaseUrl, bus, address: appsetAddress, tokens,
//     apiAddress: api.grpcAddress, repoAddress: repo.grpcAddress, repoToken: repo.serviceToken('appset') });
import { randomBytes } from 'node:crypto';
import type { TestBus } from '@capstan/test/infra';
import { testPki, loggedPort, startServiceProcess, type ServiceProcess } from '../src/infra/index.js';
import { freePorts } from '../src/kube/loopback.js';

export interface AppsetTokens {
  /** What the api presents to appset (appset's auth.service-tokens `api=`; the api's appset.service-token). */
  apiToAppset: string;
  /** What appset presents to the api (appset's api.service-token; the api's auth.service-tokens `appset=`). */
  appsetToApi: string;
}

export function appsetTokens(): AppsetTokens {
  return { apiToAppset: randomBytes(24).toString('hex'), appsetToApi: randomBytes(24).toString('hex') };
}

/** A loopback address for the appset's gRPC port, known before the api starts. */
export async function reserveAppsetAddress(): Promise<string> {
  const [port] = await freePorts(1);
  return `127.0.0.1:${port}`;
}

export interface AppsetProcess extends ServiceProcess {
  grpcAddress: string;
  /** The Prometheus text from the ops endpoint. */
  metrics(): Promise<string>;
}

export async function startAppsetProcess(opts: {
  databaseUrl: string;
  bus: TestBus;
  address: string;
  tokens: AppsetTokens;
  apiAddress: string;
  repoAddress: string;
  /** appset's token towards repo (the repo harness's serviceToken('appset')). */
  repoToken: string;
  env?: Record<string, string>;
}): Promise<AppsetProcess> {
  const pki = await testPki();
  const port = opts.address.split(':').at(-1)!;
  const service = await startServiceProcess('appset', {
    DATABASE_URL: opts.databaseUrl,
    ...opts.bus.env('appset'),
    ...pki.env('appset'),
    CAPSTAN_LOG_LEVEL: 'debug',
    CAPSTAN_GRPC_PORT: port,
    CAPSTAN_AUTH_SERVICE_TOKENS: `api=${opts.tokens.apiToAppset}`,
    CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY: pki.delegation.publicKeyPem,
    CAPSTAN_API_ADDRESS: opts.apiAddress,
    CAPSTAN_API_SERVICE_TOKEN: opts.tokens.appsetToApi,
    CAPSTAN_REPO_ADDRESS: opts.repoAddress,
    CAPSTAN_REPO_SERVICE_TOKEN: opts.repoToken,
    ...opts.env,
  });
  return {
    ...service,
    grpcAddress: `127.0.0.1:${loggedPort(service, 'grpcPort')}`,
    async metrics() {
      const res = await fetch(`http://127.0.0.1:${loggedPort(service, 'opsPort')}/metrics`);
      return res.text();
    },
  };
}
