// Argo CD's side of peer-argocd: its own binary (built from its Go module by
// test/scripts/obtain-argocd.sh, cached under ~/.cache/capstan/argocd/<version>/) run as local
// processes: redis-server (Debian's), argocd-repo-server, argocd-application-controller and
// argocd-server (which serves the webhook), against the shared kube-apiserver and git server. Its
// CRDs come from the module (manifests/crds); the destination is registered with a cluster Secret
// (the controller runs outside a cluster, so https://kubernetes.default.svc does not work). The
// Applications' statuses are read with a watch on the API server, so watching costs Argo nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CustomObjectsApi,
  KubernetesObjectApi,
  loadAllYaml,
  PatchStrategy,
  Watch,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { KubeCluster } from '@capstan/test/kube';
import { appName, appPath, postGithubPush, type PeerSystem, type Tracker } from './peer-argocd-workload.js';

/** The controller's processors, fixed for every run (Argo CD's defaults are 20 and 10). */
export const ARGO_SETTINGS = {
  statusProcessors: Number(process.env.PEER_ARGOCD_STATUS_PROCESSORS ?? 10),
  operationProcessors: Number(process.env.PEER_ARGOCD_OPERATION_PROCESSORS ?? 5),
  appResyncSeconds: 180,
  repoServerParallelismLimit: 0,
};
const NS = 'argocd';
const PART_OF = { 'app.kubernetes.io/part-of': 'argocd' };

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

interface Proc {
  name: string;
  child: ChildProcess;
  output(): string;
}

function run(name: string, command: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (c: Buffer) => (output = (output + c.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { name, child, output: () => output };
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const listening = (port: number) => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.ok);

/** Argo CD's namespace, settings, CRDs, project and the cluster Secret of the destination. */
async function install(cluster: KubeCluster, crdDir: string, webhookSecret: string): Promise<void> {
  const objects = KubernetesObjectApi.makeApiClient(cluster.adminKubeconfig);
  const apply = (o: KubernetesObject) =>
    objects.patch(o, undefined, undefined, 'bench', true, PatchStrategy.ServerSideApply);
  for (const crd of ['application-crd.yaml', 'appproject-crd.yaml'])
    for (const o of loadAllYaml(readFileSync(join(crdDir, crd), 'utf8')) as KubernetesObject[])
      await apply(o);
  await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const cm = (name: string, data: Record<string, string>) =>
    apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: NS, labels: PART_OF },
      data,
    } as never);
  await cm('argocd-cm', {});
  await cm('argocd-rbac-cm', {});
  await cm('argocd-cmd-params-cm', {});
  await apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'argocd-secret', namespace: NS, labels: PART_OF },
    stringData: { 'server.secretkey': 'bench-server-secret-key', 'webhook.github.secret': webhookSecret },
  } as never);
  await apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'cluster-bench',
      namespace: NS,
      labels: { 'argocd.argoproj.io/secret-type': 'cluster' },
    },
    stringData: {
      name: 'bench',
      server: cluster.server,
      config: JSON.stringify({
        bearerToken: cluster.adminToken,
        tlsClientConfig: { caData: cluster.caData },
      }),
    },
  } as never);
  // The CRDs are served once established: the project is written as soon as they are.
  await waitFor('the AppProject CRD', async () => {
    await apply({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AppProject',
      metadata: { name: 'default', namespace: NS },
      spec: {
        sourceRepos: ['*'],
        destinations: [{ server: '*', namespace: '*' }],
        clusterResourceWhitelist: [{ group: '*', kind: '*' }],
      },
    } as never);
    return true;
  });
}

export async function startArgo(opts: {
  binDir: string;
  cluster: KubeCluster;
  repoUrl: string;
  webhookSecret: string;
  tracker: Tracker;
  namespace: (i: number) => string;
}): Promise<PeerSystem> {
  const { cluster } = opts;
  await install(cluster, join(opts.binDir, 'crds'), opts.webhookSecret);
  const dir = mkdtempSync(join(tmpdir(), 'capstan-bench-argocd-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const name of ['argocd', 'argocd-repo-server', 'argocd-application-controller', 'argocd-server'])
    symlinkSync(join(opts.binDir, 'argocd'), join(bin, name));
  const data: Record<string, string> = {};
  for (const key of [
    'ARGOCD_TLS_DATA_PATH',
    'ARGOCD_SSH_DATA_PATH',
    'ARGOCD_GNUPGHOME',
    'ARGOCD_GPG_DATA_PATH',
  ]) {
    data[key] = join(dir, key.toLowerCase());
    mkdirSync(data[key], { recursive: true });
  }
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, cluster.kubeconfigYamlFor('admin'));
  const env = {
    PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
    HOME: dir,
    ARGOCD_GPG_ENABLED: 'false',
    ...data,
  };
  const ports = { redis: await freePort(), repo: await freePort(), repoMetrics: await freePort() };
  const more = {
    controllerMetrics: await freePort(),
    server: await freePort(),
    serverMetrics: await freePort(),
  };
  const redisAddress = `127.0.0.1:${ports.redis}`;
  const procs: Proc[] = [];
  const stopAll = async () => {
    for (const p of procs.reverse()) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
      const exited = new Promise((r) => p.child.once('exit', r));
      p.child.kill('SIGTERM');
      const timer = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Logs at the default level (info), as Capstan's services.
  const common: string[] = [];
  let watch: { abort(): void } | undefined;
  try {
    procs.push(
      run(
        'redis',
        'redis-server',
        ['--port', String(ports.redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        env,
      ),
    );
    procs.push(
      run(
        'repo-server',
        join(bin, 'argocd-repo-server'),
        [
          ...common,
          '--redis',
          redisAddress,
          '--port',
          String(ports.repo),
          '--metrics-port',
          String(ports.repoMetrics),
          '--disable-tls',
          '--parallelismlimit',
          String(ARGO_SETTINGS.repoServerParallelismLimit),
        ],
        env,
      ),
    );
    await waitFor('argocd-repo-server', () => listening(ports.repoMetrics));
    const repoServer = [
      '--repo-server',
      `127.0.0.1:${ports.repo}`,
      '--repo-server-plaintext',
      '--redis',
      redisAddress,
    ];
    procs.push(
      run(
        'application-controller',
        join(bin, 'argocd-application-controller'),
        [
          ...common,
          ...repoServer,
          '--kubeconfig',
          kubeconfig,
          '--namespace',
          NS,
          '--metrics-port',
          String(more.controllerMetrics),
          '--status-processors',
          String(ARGO_SETTINGS.statusProcessors),
          '--operation-processors',
          String(ARGO_SETTINGS.operationProcessors),
          '--app-resync',
          String(ARGO_SETTINGS.appResyncSeconds),
        ],
        env,
      ),
    );
    await waitFor('argocd-application-controller', () => listening(more.controllerMetrics));
    procs.push(
      run(
        'server',
        join(bin, 'argocd-server'),
        [
          ...common,
          ...repoServer,
          '--kubeconfig',
          kubeconfig,
          '--namespace',
          NS,
          '--insecure',
          '--port',
          String(more.server),
          '--metrics-port',
          String(more.serverMetrics),
        ],
        env,
      ),
    );
    await waitFor('argocd-server', () => listening(more.serverMetrics));
    watch = await watchApplications(cluster, opts.tracker);
  } catch (err) {
    const out = procs.map((p) => `${p.name}:\n${p.output().slice(-3000)}`).join('\n');
    await stopAll();
    throw new Error(`${(err as Error).message}\n${out}`);
  }
  const custom = cluster.adminKubeconfig.makeApiClient(CustomObjectsApi);
  return {
    pids: () => new Map(procs.map((p) => [p.name, p.child.pid!])),
    async createApps(apps) {
      const queue = Array.from({ length: apps }, (_, i) => i);
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let i = queue.shift(); i !== undefined; i = queue.shift())
            await custom.createNamespacedCustomObject({
              group: 'argoproj.io',
              version: 'v1alpha1',
              namespace: NS,
              plural: 'applications',
              body: {
                apiVersion: 'argoproj.io/v1alpha1',
                kind: 'Application',
                metadata: { name: appName(i), namespace: NS },
                spec: {
                  project: 'default',
                  source: { repoURL: opts.repoUrl, path: appPath(i), targetRevision: 'main' },
                  destination: { server: cluster.server, namespace: opts.namespace(i) },
                  syncPolicy: { automated: {} },
                },
              },
            });
        }),
      );
    },
    async announcePush(push) {
      const res = await postGithubPush(
        `http://127.0.0.1:${more.server}/api/webhook`,
        opts.repoUrl,
        push,
        opts.webhookSecret,
      );
      if (res.status !== 200)
        throw new Error(`Argo CD's webhook answered ${res.status}: ${await res.text()}`);
    },
    output: () => procs.map((p) => `${p.name}:\n${p.output().slice(-3000)}`).join('\n-----\n'),
    async stop() {
      watch?.abort();
      await stopAll();
    },
  };
}

interface ArgoApplication {
  metadata: { name: string };
  status?: {
    sync?: { status?: string; revision?: string };
    operationState?: { phase?: string; syncResult?: { revision?: string } };
  };
}

/** Feeds the tracker from a watch of the Applications (restarted when the server closes it). */
async function watchApplications(cluster: KubeCluster, tracker: Tracker): Promise<{ abort(): void }> {
  const w = new Watch(cluster.adminKubeconfig);
  let stopped = false;
  let current: { abort(): void } | undefined;
  const start = async (): Promise<void> => {
    current = await w.watch(
      `/apis/argoproj.io/v1alpha1/namespaces/${NS}/applications`,
      {},
      (_type: string, app: ArgoApplication) => {
        const s = app.status;
        tracker.update(app.metadata.name, {
          syncStatus: s?.sync?.status,
          revision: s?.sync?.revision,
          operationPhase: s?.operationState?.phase,
          operationRevision: s?.operationState?.syncResult?.revision,
        });
      },
      () => {
        if (!stopped) void start();
      },
    );
  };
  await start();
  return {
    abort() {
      stopped = true;
      current?.abort();
    },
  };
}
