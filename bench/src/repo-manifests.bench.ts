// Repo service: warm manifest generation (p50/p99) for a 100-file directory and a kustomize app,
// and cold checkout side by side with a bare `git clone` of the same repository in the same run.
// Everything is real: the repo service runs as its own process (services/repo/dist/main.js) on the
// machine's PostgreSQL and NATS, serving over gRPC; repositories live on the real git http-backend.
// Goals (issue 4): warm p50 < 20 ms; cold <= 1.2x bare git.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { credentials, Metadata } from '@grpc/grpc-js';
import { repov1, unary, type UnaryMethod } from '@capstan/proto';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { createTestBus, createTestDatabase } from '@capstan/test/infra';
import { report, summarize, type Figure } from './harness.js';

const execFileAsync = promisify(execFile);
const WARM_ITERATIONS = Number(process.env.REPO_BENCH_WARM ?? 300);
const COLD_ROUNDS = Number(process.env.REPO_BENCH_COLD ?? 16);

interface RepoProcess {
  call<Req, Res>(
    method: (c: repov1.RepoServiceClient) => UnaryMethod<Req, Res>,
    req: Req,
    as?: 'sync' | 'appset',
  ): Promise<Res>;
  stop(): Promise<void>;
}

async function startRepoProcess(env: Record<string, string>): Promise<RepoProcess> {
  const main = path.join(path.dirname(fileURLToPath(import.meta.resolve('@capstan/repo'))), 'main.js');
  const tokens = { sync: randomBytes(24).toString('hex'), appset: randomBytes(24).toString('hex') };
  const child = spawn(process.execPath, [main], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      ...(process.env.CAPSTAN_CACHE ? { CAPSTAN_CACHE: process.env.CAPSTAN_CACHE } : {}),
      CAPSTAN_GRPC_PORT: '0',
      CAPSTAN_HTTP_PORT: '0',
      CAPSTAN_LOG_LEVEL: 'info',
      CAPSTAN_AUTH_SERVICE_TOKENS: `sync=${tokens.sync},appset=${tokens.appset}`,
      CAPSTAN_CREDENTIALS_ENCRYPTION_KEYS: JSON.stringify({
        active: 'k1',
        keys: { k1: randomBytes(32).toString('base64') },
      }),
      CAPSTAN_POLL_INTERVAL_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /"grpcPort":(\d+)/.exec(output);
      if (m) {
        clearInterval(timer);
        resolve(Number(m[1]));
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`repo service exited with ${code}: ${output}`));
    });
  });
  const client = new repov1.RepoServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
  const metadataFor = (service: 'sync' | 'appset') => {
    const md = new Metadata();
    md.set('authorization', `Bearer ${tokens[service]}`);
    return md;
  };
  return {
    call: (method, req, as = 'sync') =>
      unary(method(client).bind(client), req, { metadata: metadataFor(as), timeoutMs: 120_000 }),
    async stop() {
      client.close();
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const configMap = (i: number) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-${i}\n  labels:\n    app: bench\ndata:\n${Array.from({ length: 20 }, (_, k) => `  key-${k}: "${'v'.repeat(32)}-${i}-${k}"`).join('\n')}\n`;
const deployment = (name: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  replicas: 2\n  selector:\n    matchLabels: { app: ${name} }\n  template:\n    metadata:\n      labels: { app: ${name} }\n    spec:\n      containers:\n        - name: app\n          image: example/${name}:1.0\n`;

/** A repository with a 100-file directory, a kustomize app (base + overlay) and some history. */
async function seed(repo: TestRepository): Promise<void> {
  for (let c = 0; c < 10; c++) {
    const files: Record<string, string> = {};
    for (let i = 0; i < 100; i++)
      files[`apps/plain/config-${String(i).padStart(3, '0')}.yaml`] = configMap(i + c);
    for (let i = 0; i < 10; i++) files[`apps/kustomized/base/deploy-${i}.yaml`] = deployment(`svc-${i}`);
    files['apps/kustomized/base/kustomization.yaml'] =
      `resources:\n${Array.from({ length: 10 }, (_, i) => `  - deploy-${i}.yaml`).join('\n')}\n`;
    files['apps/kustomized/overlays/prod/kustomization.yaml'] =
      `resources:\n  - ../../base\nnamePrefix: prod-\nnamespace: prod\ncommonLabels:\n  env: prod\n`;
    files['README.md'] = `# bench repository, commit ${c}\n`;
    await repo.commit(files, { message: `commit ${c}` });
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const out = await fn();
  return [performance.now() - start, out];
}

export async function main(): Promise<void> {
  const git: GitServer = await startGitServer();
  const db = await createTestDatabase('capstan_bench_repo');
  const bus = await createTestBus('repobench');
  const cacheDir = await mkdtemp(path.join(os.tmpdir(), 'capstan-repo-bench-'));
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'capstan-repo-bench-clone-'));
  const repo = await startRepoProcess({
    DATABASE_URL: db.url,
    ...bus.env('repo'),
    CAPSTAN_CACHE_DIR: cacheDir,
    // The test git server listens on this host, which the default egress policy denies.
    CAPSTAN_EGRESS_ALLOWED_NETWORKS: '127.0.0.1',
  });
  try {
    const app = { name: 'bench', namespace: 'argocd', project: 'bench' };
    const warmRepo = await git.createRepository('bench/warm.git');
    await seed(warmRepo);
    const generate = (p: string, url = warmRepo.url) =>
      repo.call((c) => c.generateManifests, {
        source: { repoUrl: url, targetRevision: 'main', path: p, chart: '' },
        application: app,
        refSources: [],
      });

    const warm: Record<string, number[]> = { plain: [], kustomize: [] };
    for (const [kind, p] of [
      ['plain', 'apps/plain'],
      ['kustomize', 'apps/kustomized/overlays/prod'],
    ] as const) {
      const first = await generate(p);
      if (first.manifests.length !== (kind === 'plain' ? 100 : 10))
        throw new Error(`${kind}: unexpected ${first.manifests.length} manifests`);
      for (let i = 0; i < WARM_ITERATIONS; i++) warm[kind]!.push((await timed(() => generate(p)))[0]);
    }

    // Cold: a fresh repository with the same content each round, cloned by the service (clone,
    // export of the tree, walk) and by a bare `git clone`, alternating which goes first.
    const coldService: number[] = [];
    const coldGenerate: number[] = [];
    const bareClone: number[] = [];
    for (let round = 0; round < COLD_ROUNDS; round++) {
      const a = await git.createRepository(`bench/cold-${round}-a.git`);
      const b = await git.createRepository(`bench/cold-${round}-b.git`);
      const c = await git.createRepository(`bench/cold-${round}-c.git`);
      for (const r of [a, b, c]) await seed(r);
      // ResolveRevision on a never-seen repository is the whole checkout: the cold path clones
      // the mirror and checks out the tree in one git process, and leaves the tree on disk.
      const service = () =>
        timed(() =>
          repo.call((cl) => cl.resolveRevision, { repoUrl: a.url, revision: 'main', application: app }),
        );
      const bare = () =>
        timed(() =>
          execFileAsync(
            'git',
            ['-c', 'credential.helper=', 'clone', '--quiet', b.url, path.join(scratch, `clone-${round}`)],
            {
              env: {
                PATH: process.env.PATH,
                HOME: scratch,
                GIT_CONFIG_NOSYSTEM: '1',
                GIT_TERMINAL_PROMPT: '0',
              },
            },
          ),
        );
      if (round % 2 === 0) {
        coldService.push((await service())[0]);
        bareClone.push((await bare())[0]);
      } else {
        bareClone.push((await bare())[0]);
        coldService.push((await service())[0]);
      }
      coldGenerate.push((await timed(() => generate('apps/plain', c.url)))[0]);
    }

    const plain = summarize(warm.plain!);
    const kustomize = summarize(warm.kustomize!);
    const cold = summarize(coldService);
    const bare = summarize(bareClone);
    const coldGen = summarize(coldGenerate);
    // Paired per round (same load, back to back), then the median: robust on a busy machine.
    const ratio = summarize(coldService.map((t, i) => t / (bareClone[i] ?? t))).p50;
    const figures: Figure[] = [
      {
        name: 'warm 100-file directory p50',
        value: plain.p50,
        unit: 'ms',
        goal: '< 20',
        met: plain.p50 < 20,
      },
      { name: 'warm 100-file directory p99', value: plain.p99, unit: 'ms' },
      {
        name: 'warm kustomize app p50',
        value: kustomize.p50,
        unit: 'ms',
        goal: '< 20',
        met: kustomize.p50 < 20,
      },
      { name: 'warm kustomize app p99', value: kustomize.p99, unit: 'ms' },
      { name: 'cold checkout (repo service) p50', value: cold.p50, unit: 'ms' },
      { name: 'bare git clone p50', value: bare.p50, unit: 'ms' },
      {
        name: 'cold checkout / bare git clone (median of rounds)',
        value: ratio,
        unit: 'x',
        goal: '<= 1.2',
        met: ratio <= 1.2,
      },
      { name: 'cold 100-file generation p50', value: coldGen.p50, unit: 'ms' },
    ];
    report('repo-manifests', figures, {
      warmIterations: WARM_ITERATIONS,
      coldRounds: COLD_ROUNDS,
      repository: '10 commits; 100 ConfigMaps in apps/plain; kustomize base (10 Deployments) + prod overlay',
      path: 'gRPC GenerateManifests from a client process to the repo service process, including credential lookup and its audit row',
      warmRevision:
        "targetRevision 'main' (branch resolution reused within revision.cache-ttl-ms, default 10 s)",
      coldCheckout:
        'gRPC ResolveRevision on a never-seen repository: one git clone (mirror + tree of the branch), credential lookup + audit row included; the tree is on disk afterwards',
      bareClone:
        'git clone (with checkout) of an identical repository on the same server, same run, alternating order',
      samples: { coldService, bareClone, coldGenerate },
    });
  } finally {
    await repo.stop();
    await git.close();
    await bus.cleanup();
    await db.drop();
    await rm(cacheDir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main();
