// Starts the appset service in-process on the real PostgreSQL and NATS, with the run's PKI (mutual
// TLS) and delegation key, and the api stand-in; gives tests AppSetService clients as any service.
import { randomBytes } from 'node:crypto';
import { credentials, Metadata } from '@grpc/grpc-js';
import { appsetv1, unary, type UnaryMethod } from '@capstan/proto';
import { startService, type RunningService } from '@capstan/service';
import { DelegationIssuer, delegationPrivateKey, type MintRequest } from '@capstan/service-identity';
import {
  createTestBus,
  createTestDatabase,
  testPki,
  type ServiceName,
  type TestBus,
  type TestDatabase,
  type TestPki,
} from '@capstan/test/infra';
import { appsetSettings } from '../settings.js';
import { startAppset, type AppSetHandles } from '../appset-service.js';
import { ApiStandIn } from './api-stand-in.js';

export interface Harness {
  tdb: TestDatabase;
  tbus: TestBus;
  pki: TestPki;
  api: ApiStandIn;
  handles: AppSetHandles;
  service: RunningService<never>;
  tokens: Record<'api' | 'sync', string>;
  mint(req: Partial<MintRequest>): Promise<string>;
  /** Calls AppSetService as `as` (default api) with `delegation` (default: alice's user delegation). */
  call<Req, Res>(
    method: (c: appsetv1.AppSetServiceClient) => UnaryMethod<Req, Res>,
    req: Req,
    opts?: { as?: ServiceName | 'none'; delegation?: string | null; extra?: Record<string, string> },
  ): Promise<Res>;
  stop(): Promise<void>;
}

/** `bus`: a test bus of the caller's (other processes on it), left for the caller to clean up. */
export async function startHarness(
  env: Record<string, string> = {},
  opts: { bus?: TestBus } = {},
): Promise<Harness> {
  const [tdb, tbus, pki] = await Promise.all([createTestDatabase(), opts.bus ?? createTestBus(), testPki()]);
  const tokens = { api: randomBytes(24).toString('hex'), sync: randomBytes(24).toString('hex') };
  const issuer = new DelegationIssuer(delegationPrivateKey(pki.delegation.privateKeyPem));
  // Owner delegations as the api would issue them: held by appset, for the set's recorded owner.
  const api = new ApiStandIn(({ resource, audience }) =>
    issuer.mint({ user: 'alice', holder: 'appset', audience, kind: 'owner', resource }),
  );
  let handles: AppSetHandles | undefined;
  const service = await startService({
    name: 'appset',
    settings: appsetSettings,
    sources: {
      argv: [],
      env: {
        DATABASE_URL: tdb.url,
        ...tbus.env('appset'),
        ...pki.env('appset'),
        CAPSTAN_LOG_LEVEL: 'warn',
        CAPSTAN_HTTP_PORT: '0',
        CAPSTAN_GRPC_PORT: '0',
        CAPSTAN_AUTH_SERVICE_TOKENS: `api=${tokens.api},sync=${tokens.sync}`,
        CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY: pki.delegation.publicKeyPem,
        ...env,
      },
    },
    start: async (ctx) => {
      handles = await startAppset(ctx, { api });
    },
  });
  const mint = (req: Partial<MintRequest>) =>
    issuer.mint({ user: 'alice', holder: 'api', audience: 'appset', ...req } as MintRequest);
  const address = `127.0.0.1:${handles!.grpcPort}`;
  const clients = new Map<string, appsetv1.AppSetServiceClient>();
  const clientAs = (s: ServiceName | 'none') => {
    let c = clients.get(s);
    if (!c) {
      const m = pki.material(s === 'none' ? 'appset' : s);
      c = new appsetv1.AppSetServiceClient(
        address,
        s === 'none' ? credentials.createSsl(m.ca) : credentials.createSsl(m.ca, m.key, m.cert),
      );
      clients.set(s, c);
    }
    return c;
  };
  return {
    tdb,
    tbus,
    pki,
    api,
    handles: handles!,
    service: service as unknown as RunningService<never>,
    tokens,
    mint,
    async call(method, req, opts = {}) {
      const as = opts.as ?? 'api';
      const md = new Metadata();
      md.set('authorization', `Bearer ${as === 'sync' ? tokens.sync : tokens.api}`);
      const delegation = opts.delegation === undefined ? await mint({}) : opts.delegation;
      if (delegation) md.set('capstan-delegation', delegation);
      for (const [k, v] of Object.entries(opts.extra ?? {})) md.set(k, v);
      const c = clientAs(as);
      return unary(method(c).bind(c), req, { metadata: md, timeoutMs: 30_000 });
    },
    async stop() {
      for (const c of clients.values()) c.close();
      await service.stop();
      await Promise.all([tdb.drop(), opts.bus ? undefined : tbus.cleanup()]);
    },
  };
}
