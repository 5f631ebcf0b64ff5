// Capstan's side of peer-argocd: the repo, api and sync services as their own processes (built
// services/*/dist/main.js, configured by environment as in production: mutual TLS, service tokens,
// the api's delegations), with every setting at its default except the webhook secret. The sync
// service runs without impersonation (it writes with the cluster's credential, as Argo CD's
// controller does). Its verdicts are read from the bus (sync.status-changed, sync.started,
// sync.succeeded), so watching costs the measured processes nothing.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { credentials } from '@grpc/grpc-js';
import { connectBus, syncStarted, syncStatusChanged, syncSucceeded, type Bus } from '@capstan/events';
import { apiv1, bearer, unary } from '@capstan/proto';
import { generateKeyringJson } from '@capstan/sealing';
import {
  loggedPort,
  startServiceProcess,
  testPki,
  type ServiceProcess,
  type TestBus,
} from '@capstan/test/infra';
import type { KubeCluster } from '@capstan/test/kube';
import {
  appName,
  appPath,
  NAMESPACES,
  postGithubPush,
  type PeerSystem,
  type Tracker,
} from './peer-argocd-workload.js';

const ADMIN_PASSWORD = 'bench-admin-password';

/** Child processes of this one whose command line runs services/<name>/dist/main.js. */
function childPid(name: string): number | undefined {
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(`services/${name}/dist/main.js`))
        return Number(d);
    } catch {
      // ended
    }
  }
  return undefined;
}

export async function startCapstan(opts: {
  databaseUrl: string;
  bus: TestBus;
  cluster: KubeCluster;
  repoUrl: string;
  cacheDir: string;
  webhookSecret: string;
  tracker: Tracker;
  namespace: (i: number) => string;
}): Promise<PeerSystem> {
  const pki = await testPki();
  const { bus } = opts;
  const services: ServiceProcess[] = [];
  const stopAll = async () => {
    for (const s of services.reverse()) await s.stop().catch(() => {});
  };
  const tokens = { api: randomBytes(24).toString('hex'), sync: randomBytes(24).toString('hex') };
  const syncToken = randomBytes(24).toString('hex');
  try {
    const repo = await startServiceProcess('repo', {
      DATABASE_URL: opts.databaseUrl,
      ...bus.env('repo'),
      CAPSTAN_GRPC_PORT: '0',
      CAPSTAN_LOG_LEVEL: 'info',
      CAPSTAN_AUTH_SERVICE_TOKENS: `api=${tokens.api},sync=${tokens.sync}`,
      CAPSTAN_CREDENTIALS_ENCRYPTION_KEYS: generateKeyringJson(),
      CAPSTAN_CACHE_DIR: opts.cacheDir,
      // The git server listens on this host, which the default egress policy denies.
      CAPSTAN_EGRESS_ALLOWED_NETWORKS: '127.0.0.1',
      CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY: pki.delegation.publicKeyPem,
      ...pki.env('repo'),
    });
    services.push(repo);
    const repoAddress = `127.0.0.1:${loggedPort(repo, 'grpcPort')}`;
    const api = await startServiceProcess('api', {
      DATABASE_URL: opts.databaseUrl,
      ...bus.env('api'),
      CAPSTAN_GRPC_PORT: '0',
      CAPSTAN_API_HTTP_PORT: '0',
      CAPSTAN_LOG_LEVEL: 'info',
      CAPSTAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
      CAPSTAN_SERVICE_TOKENS: `sync=${syncToken}`,
      CAPSTAN_API_ENCRYPTION_KEYS: generateKeyringJson(),
      CAPSTAN_REPO_ADDRESS: repoAddress,
      CAPSTAN_REPO_SERVICE_TOKEN: tokens.api,
      CAPSTAN_WEBHOOK_GITHUB_SECRET: opts.webhookSecret,
      ...pki.env('api'),
      CAPSTAN_AUTH_DELEGATION_KEY: pki.delegation.privateKeyPem,
    });
    services.push(api);
    const apiAddress = `127.0.0.1:${loggedPort(api, 'grpcPort')}`;
    const httpUrl = `http://127.0.0.1:${loggedPort(api, 'httpPort')}`;
    const sync = await startServiceProcess(
      'sync',
      {
        DATABASE_URL: opts.databaseUrl,
        ...bus.env('sync'),
        CAPSTAN_LOG_LEVEL: 'info',
        CAPSTAN_API_ADDRESS: apiAddress,
        CAPSTAN_API_SERVICE_TOKEN: syncToken,
        CAPSTAN_REPO_ADDRESS: repoAddress,
        CAPSTAN_REPO_SERVICE_TOKEN: tokens.sync,
        ...pki.env('sync'),
      },
      [],
    );
    services.push(sync);
    const pids = new Map<string, number>();
    for (const name of ['repo', 'api', 'sync']) pids.set(name, childPid(name)!);
    const watcher = await watchBus(bus, opts.tracker);
    const creds = credentials.createSsl(Buffer.from(pki.material('api').ca));
    const sessions = new apiv1.SessionServiceClient(apiAddress, creds);
    const admin = bearer(
      (await unary(sessions.create.bind(sessions), { username: 'admin', password: ADMIN_PASSWORD })).token,
    );
    const clusters = new apiv1.ClusterServiceClient(apiAddress, creds);
    const projects = new apiv1.ProjectServiceClient(apiAddress, creds);
    const applications = new apiv1.ApplicationServiceClient(apiAddress, creds);
    await unary(
      clusters.create.bind(clusters),
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
    await unary(
      projects.create.bind(projects),
      {
        project: apiv1.Project.fromJSON({
          metadata: { name: 'bench' },
          spec: {
            sourceRepos: ['*'],
            destinations: Array.from({ length: NAMESPACES }, (_, n) => ({
              name: 'bench',
              namespace: opts.namespace(n),
            })),
          },
        }),
        upsert: false,
      },
      { metadata: admin },
    );
    return {
      pids: () => pids,
      async createApps(apps) {
        const queue = Array.from({ length: apps }, (_, i) => i);
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            for (let i = queue.shift(); i !== undefined; i = queue.shift())
              await unary(
                applications.create.bind(applications),
                {
                  application: apiv1.Application.fromJSON({
                    metadata: { name: appName(i), namespace: 'argocd' },
                    spec: {
                      project: 'bench',
                      source: { repoURL: opts.repoUrl, path: appPath(i), targetRevision: 'main' },
                      destination: { name: 'bench', namespace: opts.namespace(i) },
                      syncPolicy: { automated: {} },
                    },
                  }),
                  upsert: false,
                },
                { metadata: admin },
              );
          }),
        );
      },
      async announcePush(push) {
        const res = await postGithubPush(`${httpUrl}/api/webhook`, opts.repoUrl, push, opts.webhookSecret);
        if (res.status !== 200)
          throw new Error(`Capstan's webhook answered ${res.status}: ${await res.text()}`);
      },
      output: () => services.map((s) => s.output().slice(-3000)).join('\n-----\n'),
      async stop() {
        for (const c of [sessions, clusters, projects, applications]) c.close();
        await watcher.close();
        await stopAll();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** Feeds the tracker from the bus: status-changed (sync status, revision), started and succeeded. */
async function watchBus(testBus: TestBus, tracker: Tracker): Promise<Bus> {
  const bus = await connectBus({ ...testBus.connection('admin'), service: 'bench' });
  const subscribe = (subject: string, on: (data: never) => void) => {
    const sub = bus.nc.subscribe(`${bus.namespace}.${subject}`);
    void (async () => {
      for await (const m of sub) on((JSON.parse(new TextDecoder().decode(m.data)) as { data: never }).data);
    })();
  };
  subscribe(
    syncStatusChanged.subject,
    (d: { application: { name: string }; sync: { status: string; revision?: string } }) =>
      tracker.update(d.application.name, { syncStatus: d.sync.status, revision: d.sync.revision }),
  );
  subscribe(syncStarted.subject, (d: { application: { name: string }; dryRun: boolean }) => {
    if (!d.dryRun) tracker.update(d.application.name, { operationPhase: 'Running' });
  });
  subscribe(
    syncSucceeded.subject,
    (d: { application: { name: string }; revision: string | null; dryRun: boolean }) => {
      if (!d.dryRun)
        tracker.update(d.application.name, {
          operationPhase: 'Succeeded',
          operationRevision: d.revision ?? '',
        });
    },
  );
  return bus;
}
