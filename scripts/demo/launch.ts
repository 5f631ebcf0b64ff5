// What each component of the local stack runs and with which settings. Every setting goes through
// the environment, as a deployment would pass it; secrets come from .capstan/secrets.json.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { renderNatsConfig } from '@capstan/bus-auth';
import bcrypt from 'bcryptjs';
import { dexConfig, makeServicePki, obtainedTool, type ServicePki } from '@capstan/test/infra';
import { demoBusUsers, type StackSecrets } from './secrets.js';
import { installation, paths, ports, repoRoot, story } from './stack.js';
import { ready, startBackground, waitFor, type ProcessRecord } from './processes.js';

export interface ClusterInfo {
  name: string;
  server: string;
  auditLogPath: string;
  adminKubeconfig: string;
  controlPlaneKubeconfig: string;
}

export interface GitInfo {
  baseUrl: string;
  repositories: { name: string; url: string; sha: string }[];
}

const dist = (p: string) => path.join(repoRoot, p);

/** Fails with the port and its user when a port the stack needs is taken. */
export async function assertPortsFree(): Promise<void> {
  const wanted: [string, number][] = [
    ['api gRPC', ports.apiGrpc],
    ['api HTTP', ports.apiHttp],
    ['repo gRPC', ports.repoGrpc],
    ['appset gRPC', ports.appsetGrpc],
    ['sync gRPC', ports.syncGrpc],
    ['nats', ports.nats],
    ['OCI registry', ports.registry],
    ['Dex', ports.dex],
    ['capstan login --sso callback', ports.ssoCallback],
    ...Object.entries(ports.ops).map(([s, p]): [string, number] => [`${s} /readyz`, p]),
  ];
  const taken: string[] = [];
  for (const [what, port] of wanted) {
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (!free) taken.push(`${port} (${what})`);
  }
  if (taken.length > 0)
    throw new Error(
      `ports in use on 127.0.0.1: ${taken.join(', ')}. Another program (or a stack not started by ` +
        `this checkout's npm run up) holds them; stop it and run npm run up again.`,
    );
}

export async function startKube(): Promise<{ record: ProcessRecord; cluster: ClusterInfo }> {
  const out = paths.kube;
  const list = path.join(out, 'clusters.json');
  rmSync(list, { force: true });
  const record = startBackground(
    'kube',
    dist('test/dist/kube/up.js'),
    ['--clusters', story.cluster, '--out', out],
    process.env.CAPSTAN_KUBE_BIN_DIR ? { CAPSTAN_KUBE_BIN_DIR: process.env.CAPSTAN_KUBE_BIN_DIR } : {},
  );
  const clusters = await waitFor(
    record,
    'ready API server',
    () =>
      existsSync(list)
        ? (JSON.parse(readFileSync(list, 'utf8')) as Omit<ClusterInfo, 'adminKubeconfig'>[])
        : undefined,
    180_000,
  );
  const c = clusters[0]!;
  return {
    record,
    cluster: {
      name: c.name,
      server: c.server,
      auditLogPath: c.auditLogPath,
      adminKubeconfig: path.join(out, `${c.name}.admin.kubeconfig`),
      controlPlaneKubeconfig: path.join(out, `${c.name}.control-plane.kubeconfig`),
    },
  };
}

export async function startGit(secrets: StackSecrets): Promise<{ record: ProcessRecord; git: GitInfo }> {
  const out = path.join(paths.run, 'git-server.json');
  rmSync(out, { force: true });
  const record = startBackground(
    'git',
    dist('test/dist/git/cli.js'),
    ['--root', paths.git, '--repo', `${story.repository}=${path.join(paths.demo, 'repo')}`, '--out', out],
    { CAPSTAN_GIT_USERNAME: story.gitUsername, CAPSTAN_GIT_PASSWORD: secrets.gitPassword },
  );
  const git = await waitFor(
    record,
    'git server',
    () => (existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as GitInfo) : undefined),
    60_000,
  );
  return { record, git };
}

/** A readiness check for waitFor: the URL answers 2xx (within 2 s). */
function answers(url: string): () => Promise<true | undefined> {
  return async () => {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      return res.ok ? true : undefined;
    } catch {
      return undefined;
    }
  };
}

/**
 * The OCI registry of the Helm chart chapter: CNCF Distribution (test/scripts/obtain-registry.sh),
 * on 127.0.0.1 without users, its storage under .capstan/registry; ready when /v2/ answers.
 */
export async function startRegistry(): Promise<{ record: ProcessRecord; url: string }> {
  mkdirSync(path.join(paths.registry, 'storage'), { recursive: true });
  const config = path.join(paths.registry, 'config.yml');
  writeFileSync(
    config,
    `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${paths.registry}/storage\nhttp:\n  addr: 127.0.0.1:${ports.registry}\n`,
  );
  // The script slot (argv[1], by which the process is recognised later) holds `serve`.
  const record = startBackground('registry', 'serve', [config], {}, obtainedTool('obtain-registry.sh'));
  await waitFor(record, 'OCI registry', answers(`http://127.0.0.1:${ports.registry}/v2/`), 30_000);
  return { record, url: story.chartRegistry };
}

/**
 * Dex, the OpenID Connect provider of the single sign-on chapter (test/scripts/obtain-dex.sh), on
 * 127.0.0.1 with the static password connector: one person (story.ssoUser, password from the secrets,
 * kept by Dex as a bcrypt hash only) and the static client `capstan`, whose redirects are the web UI's
 * and the CLI's callbacks. The configuration holds the client secret: mode 600.
 */
export async function startDex(secrets: StackSecrets): Promise<{ record: ProcessRecord; issuer: string }> {
  mkdirSync(paths.dex, { recursive: true, mode: 0o700 });
  const config = dexConfig({
    port: ports.dex,
    users: [{ ...story.ssoUser, hash: bcrypt.hashSync(secrets.ssoPassword, 10) }],
    client: { id: 'capstan', secret: secrets.dexClientSecret },
    redirectURIs: [
      `http://127.0.0.1:${ports.apiHttp}/auth/callback`,
      `http://127.0.0.1:${ports.ssoCallback}/auth/callback`,
    ],
  });
  const file = path.join(paths.dex, 'config.json');
  writeFileSync(file, JSON.stringify(config), { mode: 0o600 });
  // The script slot (argv[1], by which the process is recognised later) holds `serve`.
  const record = startBackground('dex', 'serve', [file], {}, obtainedTool('obtain-dex.sh'));
  await waitFor(record, 'Dex', answers(`${config.issuer}/.well-known/openid-configuration`), 30_000);
  return { record, issuer: config.issuer };
}

/**
 * Capstan's own nats-server: users and subject permissions from @capstan/bus-auth for the demo's
 * namespace, passwords from .capstan/secrets.json, in a generated configuration (mode 600).
 */
export async function startNats(secrets: StackSecrets): Promise<ProcessRecord> {
  mkdirSync(paths.nats, { recursive: true, mode: 0o700 });
  const config = path.join(paths.nats, 'nats.conf');
  writeFileSync(
    config,
    renderNatsConfig({
      host: '127.0.0.1',
      port: ports.nats,
      storeDir: path.join(paths.nats, 'jetstream'),
      users: demoBusUsers(),
      password: (u) => secrets.natsPasswords[u]!,
      serverName: 'capstan-demo',
    }),
    { mode: 0o600 },
  );
  const bin =
    ['/usr/sbin/nats-server', '/usr/local/bin/nats-server'].find((b) => existsSync(b)) ?? 'nats-server';
  // The script slot (argv[1], by which the process is recognised later) holds the config flag.
  const record = startBackground('nats', `--config=${config}`, [], {}, bin);
  await waitFor(
    record,
    'nats-server',
    () =>
      new Promise<true | undefined>((resolve) => {
        const s = net.connect({ host: '127.0.0.1', port: ports.nats }, () => (s.destroy(), resolve(true)));
        s.on('error', () => resolve(undefined));
      }),
    30_000,
  );
  return record;
}

/** What a service needs to connect to the bus as its own user. */
const busEnv = (s: StackSecrets, user: 'api' | 'sync' | 'repo' | 'appset') => ({
  NATS_URL: installation.natsUrl,
  NATS_USER: user,
  NATS_PASSWORD: s.natsPasswords[user]!,
  CAPSTAN_BUS_NAMESPACE: installation.busNamespace,
});

/** The internal CA and the services' certificates under .capstan/pki (kept between runs). */
export function servicePki(): Promise<ServicePki> {
  return makeServicePki(paths.pki, ['api', 'repo', 'sync', 'appset']);
}

/** tls.* settings of one service: files only, the keys stay in .capstan/pki (mode 600). */
const tlsEnv = (pki: ServicePki, service: string): Record<string, string> => ({
  CAPSTAN_TLS_CA_FILE: pki.caFile,
  CAPSTAN_TLS_CERT_FILE: pki.services[service]!.certFile,
  CAPSTAN_TLS_KEY_FILE: pki.services[service]!.keyFile,
});

const common = (opsPort: number): Record<string, string> => ({
  DATABASE_URL: installation.databaseUrl,
  CAPSTAN_HTTP_PORT: String(opsPort),
  CAPSTAN_LOG_LEVEL: 'info',
});

export function serviceEnvironments(
  s: StackSecrets,
  pki: ServicePki,
): Record<'repo' | 'api' | 'sync' | 'appset', Record<string, string>> {
  const repoAddress = `127.0.0.1:${ports.repoGrpc}`;
  const appsetAddress = `127.0.0.1:${ports.appsetGrpc}`;
  return {
    repo: {
      ...common(ports.ops.repo),
      ...busEnv(s, 'repo'),
      CAPSTAN_GRPC_PORT: String(ports.repoGrpc),
      CAPSTAN_AUTH_SERVICE_TOKENS: `api=${s.tokens.apiToRepo},sync=${s.tokens.syncToRepo},appset=${s.tokens.appsetToRepo}`,
      CAPSTAN_CREDENTIALS_ENCRYPTION_KEYS: s.repoEncryptionKeys,
      CAPSTAN_CACHE_DIR: paths.repoCache,
      // The test git server listens on this host, which the default egress policy denies.
      CAPSTAN_EGRESS_ALLOWED_NETWORKS: '127.0.0.1',
      CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY: s.delegationPublicKey,
      ...tlsEnv(pki, 'repo'),
    },
    api: {
      ...common(ports.ops.api),
      ...busEnv(s, 'api'),
      CAPSTAN_GRPC_PORT: String(ports.apiGrpc),
      CAPSTAN_API_HTTP_PORT: String(ports.apiHttp),
      CAPSTAN_AUTH_SIGNING_KEY: s.signingKey,
      CAPSTAN_ADMIN_PASSWORD: s.adminPassword,
      // A day, so the CLI context `npm run up` leaves behind outlives an afternoon of exploring.
      CAPSTAN_AUTH_SESSION_TTL_SECONDS: String(24 * 3600),
      CAPSTAN_SERVICE_TOKENS: `sync=${s.tokens.syncToApi},appset=${s.tokens.appsetToApi}`,
      CAPSTAN_API_ENCRYPTION_KEYS: s.apiEncryptionKeys,
      CAPSTAN_REPO_ADDRESS: repoAddress,
      CAPSTAN_REPO_SERVICE_TOKEN: s.tokens.apiToRepo,
      CAPSTAN_APPSET_ADDRESS: appsetAddress,
      CAPSTAN_APPSET_SERVICE_TOKEN: s.tokens.apiToAppset,
      CAPSTAN_SYNC_ADDRESS: `127.0.0.1:${ports.syncGrpc}`,
      CAPSTAN_SYNC_SERVICE_TOKEN: s.tokens.apiToSync,
      CAPSTAN_AUTH_DELEGATION_KEY: s.delegationKey,
      ...tlsEnv(pki, 'api'),
      // A larger young generation, as services/api/README.md recommends for read latency.
      NODE_OPTIONS: '--max-semi-space-size=64',
    },
    sync: {
      ...common(ports.ops.sync),
      ...busEnv(s, 'sync'),
      // No impersonation setting here: the story turns it on with argocd-cm (settings-step.ts).
      CAPSTAN_API_ADDRESS: installation.apiAddress,
      CAPSTAN_API_SERVICE_TOKEN: s.tokens.syncToApi,
      CAPSTAN_REPO_ADDRESS: repoAddress,
      CAPSTAN_REPO_SERVICE_TOKEN: s.tokens.syncToRepo,
      // Only the api calls sync's internal gRPC (ManagedResources, `capstan app diff`).
      CAPSTAN_GRPC_PORT: String(ports.syncGrpc),
      CAPSTAN_AUTH_SERVICE_TOKENS: `api=${s.tokens.apiToSync}`,
      ...tlsEnv(pki, 'sync'),
    },
    appset: {
      ...common(ports.ops.appset),
      ...busEnv(s, 'appset'),
      CAPSTAN_GRPC_PORT: String(ports.appsetGrpc),
      // Only the api calls appset, always with a user's delegation (verified with the api's public key).
      CAPSTAN_AUTH_SERVICE_TOKENS: `api=${s.tokens.apiToAppset}`,
      CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY: s.delegationPublicKey,
      CAPSTAN_API_ADDRESS: installation.apiAddress,
      CAPSTAN_API_SERVICE_TOKEN: s.tokens.appsetToApi,
      CAPSTAN_REPO_ADDRESS: repoAddress,
      CAPSTAN_REPO_SERVICE_TOKEN: s.tokens.appsetToRepo,
      ...tlsEnv(pki, 'appset'),
    },
  };
}

/** Starts one service and waits for its /readyz. */
export async function startService(
  name: 'repo' | 'api' | 'sync' | 'appset',
  env: Record<string, string>,
): Promise<ProcessRecord> {
  const record = startBackground(name, dist(`services/${name}/dist/main.js`), [], env);
  await waitFor(record, '/readyz', () => ready(ports.ops[name]), 90_000);
  return record;
}
