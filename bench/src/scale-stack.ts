// The control plane of bench/scale: the api and appset services as their own processes
// (services/*/dist/main.js through @capstan/test/infra's startServiceProcess, configured by
// environment as in production: mutual TLS, delegations, service tokens) on real PostgreSQL and
// NATS, with the accounts the measurements need: an admin, a reader who may get every Application,
// and a tenant who may get those of project `tenant` (1% of them). The sync service's reconciler
// runs in the benchmark's process (as in reconcile.bench.ts) with a stand-in manifest source, so
// a full pass can be timed to its end (resyncAll, idle).
import { randomBytes } from 'node:crypto';
import { credentials } from '@grpc/grpc-js';
import { apiv1, bearer, unary } from '@capstan/proto';
import { generateKeyringJson } from '@capstan/sealing';
import { startService } from '@capstan/service';
import { startSync, syncSettings, type RunningReconciler } from '@capstan/sync';
import {
  freePort,
  loggedPort,
  startServiceProcess,
  testPki,
  type ServiceProcess,
  type TestBus,
} from '@capstan/test/infra';
import type { KubeCluster } from '@capstan/test/kube';

const ADMIN_PASSWORD = 'bench-admin-password';
const REVISION = '5ca1e'.padEnd(40, '0');
export const NAMESPACES = 10;
export const TENANT_PROJECT = 'tenant';
const RBAC = [
  'p, role:reader, applications, get, */*, allow',
  'g, readers, role:reader',
  `p, role:tenant, applications, get, ${TENANT_PROJECT}/*, allow`,
  'g, tenants, role:tenant',
].join('\n');

export interface Stack {
  api: ServiceProcess;
  appset: ServiceProcess;
  apps: apiv1.ApplicationServiceClient;
  sets: apiv1.ApplicationSetServiceClient;
  /** gRPC call metadata of each account. */
  who: {
    admin: ReturnType<typeof bearer>;
    reader: ReturnType<typeof bearer>;
    tenant: ReturnType<typeof bearer>;
  };
  stop(): Promise<void>;
}

export async function startStack(opts: {
  databaseUrl: string;
  bus: TestBus;
  cluster?: KubeCluster;
}): Promise<Stack> {
  const pki = await testPki();
  const tokens = {
    apiToAppset: randomBytes(24).toString('hex'),
    appsetToApi: randomBytes(24).toString('hex'),
  };
  const appsetPort = await freePort();
  const started: ServiceProcess[] = [];
  try {
    const api = await startServiceProcess('api', {
      DATABASE_URL: opts.databaseUrl,
      ...opts.bus.env('api'),
      CAPSTAN_GRPC_PORT: '0',
      CAPSTAN_API_HTTP_PORT: '0',
      CAPSTAN_LOG_LEVEL: 'info',
      CAPSTAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
      CAPSTAN_RBAC_POLICY_CSV: RBAC,
      CAPSTAN_API_ENCRYPTION_KEYS: generateKeyringJson(),
      CAPSTAN_SERVICE_TOKENS: `appset=${tokens.appsetToApi}`,
      CAPSTAN_APPSET_ADDRESS: `127.0.0.1:${appsetPort}`,
      CAPSTAN_APPSET_SERVICE_TOKEN: tokens.apiToAppset,
      ...pki.env('api'),
      CAPSTAN_AUTH_DELEGATION_KEY: pki.delegation.privateKeyPem,
    });
    started.push(api);
    const address = `127.0.0.1:${loggedPort(api, 'grpcPort')}`;
    const appset = await startServiceProcess('appset', {
      DATABASE_URL: opts.databaseUrl,
      ...opts.bus.env('appset'),
      CAPSTAN_LOG_LEVEL: 'info',
      CAPSTAN_GRPC_PORT: String(appsetPort),
      CAPSTAN_AUTH_SERVICE_TOKENS: `api=${tokens.apiToAppset}`,
      CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY: pki.delegation.publicKeyPem,
      CAPSTAN_API_ADDRESS: address,
      CAPSTAN_API_SERVICE_TOKEN: tokens.appsetToApi,
      // A list generator reads no repository: nothing listens there.
      CAPSTAN_REPO_ADDRESS: `127.0.0.1:${await freePort()}`,
      CAPSTAN_REPO_SERVICE_TOKEN: randomBytes(24).toString('hex'),
      ...pki.env('appset'),
    });
    started.push(appset);
    const creds = credentials.createSsl(Buffer.from(pki.material('api').ca));
    const clients = {
      sessions: new apiv1.SessionServiceClient(address, creds),
      accounts: new apiv1.AccountServiceClient(address, creds),
      projects: new apiv1.ProjectServiceClient(address, creds),
      clusters: new apiv1.ClusterServiceClient(address, creds),
      apps: new apiv1.ApplicationServiceClient(address, creds),
      sets: new apiv1.ApplicationSetServiceClient(address, creds),
    };
    const login = async (username: string, password: string) =>
      bearer((await unary(clients.sessions.create.bind(clients.sessions), { username, password })).token);
    const admin = await login('admin', ADMIN_PASSWORD);
    for (const [name, group] of [
      ['reader', 'readers'],
      ['tenant-user', 'tenants'],
    ] as const)
      await unary(
        clients.accounts.create.bind(clients.accounts),
        { name, password: `${name}-password`, capabilities: ['login'], groups: [group] },
        { metadata: admin },
      );
    for (const name of ['bench', TENANT_PROJECT])
      await unary(
        clients.projects.create.bind(clients.projects),
        {
          project: apiv1.Project.fromJSON({
            metadata: { name },
            spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
          }),
          upsert: false,
        },
        { metadata: admin },
      );
    if (opts.cluster)
      await unary(
        clients.clusters.create.bind(clients.clusters),
        apiv1.ClusterCreateRequest.fromPartial({
          server: opts.cluster.server,
          name: 'bench',
          config: {
            bearerToken: opts.cluster.adminToken,
            tlsClientConfig: { caData: opts.cluster.caPem },
          },
        }),
        { metadata: admin },
      );
    const who = {
      admin,
      reader: await login('reader', 'reader-password'),
      tenant: await login('tenant-user', 'tenant-user-password'),
    };
    return {
      api,
      appset,
      apps: clients.apps,
      sets: clients.sets,
      who,
      async stop() {
        for (const c of Object.values(clients)) c.close();
        for (const s of started.reverse()) await s.stop().catch(() => {});
      },
    };
  } catch (err) {
    for (const s of started.reverse()) await s.stop().catch(() => {});
    throw err;
  }
}

/**
 * The sync service's reconciler in this process, fed by the api's events on the bus. Its manifest
 * source is a stand-in answering one ConfigMap per Application at a fixed revision (what a repo
 * service answers from its cache); nothing is synced, so every Application stays OutOfSync (the
 * ConfigMap is missing) and a pass changes nothing.
 */
export async function startReconciler(opts: {
  databaseUrl: string;
  bus: TestBus;
  cluster: KubeCluster;
}): Promise<{ reconciler: RunningReconciler['reconciler']; stop(): Promise<void> }> {
  let running: RunningReconciler | undefined;
  const service = await startService({
    name: 'sync',
    settings: syncSettings,
    sources: {
      argv: [],
      env: { DATABASE_URL: opts.databaseUrl, ...opts.bus.env('sync'), CAPSTAN_LOG_LEVEL: 'error' },
    },
    start: async (ctx) => {
      running = (
        await startSync(ctx, {
          manifests: {
            async render(app) {
              const name = app.metadata.name;
              const namespace = app.spec.destination.namespace ?? 'default';
              const objects = [
                { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { app: name } },
              ];
              return { revision: REVISION, objects };
            },
          },
          delivery: { deliver: () => Promise.reject(new Error('nothing is delivered')) },
          credentials: {
            get: async (ref) => ({
              name: ref.name,
              server: opts.cluster.server,
              bearerToken: opts.cluster.controlPlaneToken,
              caData: opts.cluster.caPem,
            }),
          },
        })
      ).reconciler;
    },
  });
  return { reconciler: running!.reconciler, stop: () => service.stop() };
}
