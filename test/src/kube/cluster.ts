import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, generateKeyPairSync } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { AuditLog } from './audit-log.js';
import { locateKubeBinaries, type KubeBinaries } from './binaries.js';

const execFileAsync = promisify(execFile);

/** Username of the admin identity (group system:masters): for test setup only. */
export const ADMIN_USERNAME = 'capstan-admin';
/** Username of the control-plane identity: may only impersonate ServiceAccounts (and ask what it may do). */
export const CONTROL_PLANE_USERNAME = 'capstan-control-plane';
/** Group of the control-plane identity. */
export const CONTROL_PLANE_GROUP = 'capstan:control-plane';
/** ClusterRole (and ClusterRoleBinding) that gives the control-plane identity its only rights. */
export const CONTROL_PLANE_CLUSTER_ROLE = 'capstan:control-plane-impersonator';

/**
 * Who a kubeconfig authenticates as:
 * - `'admin'`: system:masters, for setting tests up;
 * - `'control-plane'`: the control-plane identity, no impersonation;
 * - `{ impersonate }`: the control-plane identity impersonating a user, e.g.
 *   `system:serviceaccount:team-a:deployer` (the `as:` of a kubeconfig, the Impersonate-User header);
 * - `{ token }`: any bearer token (e.g. a ServiceAccount token from requestServiceAccountToken()).
 */
export type KubeIdentity =
  'admin' | 'control-plane' | { impersonate: string } | { token: string; name?: string };

export interface StartClusterOptions {
  /** Names the cluster in kubeconfigs, logs and the temporary directory (default `kube-<n>`). */
  name?: string;
  /** Where progress and timing lines go (default console.log); pass () => {} to silence. */
  log?: (line: string) => void;
  /** Give up waiting for readiness after this long (default 90 s). */
  readyTimeoutMs?: number;
  /** Keep the temporary directory (logs, audit log, certs) after stop(); also with CAPSTAN_KUBE_KEEP=1. */
  keepDir?: boolean;
  /** Extra kube-apiserver flags (`--flag=value`), appended after Capstan's. */
  extraApiserverArgs?: string[];
  /** Binaries to use (default: locateKubeBinaries()). */
  binaries?: KubeBinaries;
}

export interface StartupTimings {
  /** Ports, keys, certificates and config files. */
  prepareMs: number;
  /** etcd start to healthy (in parallel with prepare). */
  etcdMs: number;
  /** kube-apiserver start to /readyz = ok. */
  apiserverMs: number;
  /** Control-plane RBAC created. */
  rbacMs: number;
  /** startCluster() call to returned. */
  totalMs: number;
}

export interface KubeCluster {
  name: string;
  /** https://127.0.0.1:<port> */
  server: string;
  /** The cluster CA certificate, base64 of the PEM (a kubeconfig's certificate-authority-data). */
  caData: string;
  /** The cluster CA certificate, PEM. */
  caPem: string;
  adminToken: string;
  /** The control-plane identity's bearer token (what Capstan stores as a cluster's credentials). */
  controlPlaneToken: string;
  adminKubeconfig: KubeConfig;
  controlPlaneKubeconfig: KubeConfig;
  /** A client-node KubeConfig for an identity. */
  kubeconfigFor(identity: KubeIdentity, options?: { namespace?: string }): KubeConfig;
  /** The same as a kubeconfig YAML document (what kubectl --kubeconfig reads). */
  kubeconfigYamlFor(identity: KubeIdentity, options?: { namespace?: string }): string;
  /** The API server's audit log (JSON lines, level Metadata, every request but its own loopback and health checks). */
  auditLogPath: string;
  audit: AuditLog;
  /** Temporary directory with certs, tokens, etcd data and the logs (apiserver.log, etcd.log). */
  dir: string;
  timings: StartupTimings;
  /** Stops kube-apiserver and etcd (their whole process groups) and removes the temporary directory. */
  stop(): Promise<void>;
}

let clusterCounter = 0;
const portsHandedOut = new Set<number>();
const running = new Set<{ procs: ChildProcess[]; dir: string; keep: boolean }>();

// If the test process exits without stop(), don't leave servers behind. (If it dies outright,
// the wrapper below notices its stdin closing and stops the server.)
process.once('exit', () => {
  for (const r of running) {
    for (const p of r.procs) killGroup(p, 'SIGKILL');
    if (!r.keep) rmSync(r.dir, { recursive: true, force: true });
  }
});

const DIR_PREFIX = 'capstan-kube-';

/**
 * Removes the temporary directories of clusters whose Node process died without stop() (their
 * servers are gone already: see spawnSupervised).
 */
function removeStaleDirs(): void {
  let entries: string[];
  try {
    entries = readdirSync(tmpdir()).filter((e) => e.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const entry of entries) {
    const dir = join(tmpdir(), entry);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8').trim());
    } catch {
      continue;
    }
    if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid) continue;
    try {
      process.kill(owner, 0);
      continue; // its owner is alive
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') continue;
    }
    if (existsSync(join(dir, 'keep'))) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}

function killGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.pid === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
  try {
    process.kill(-proc.pid, signal);
  } catch {
    // already gone
  }
}

/** Free loopback TCP ports, distinct from every port this process handed out before. */
async function freePorts(count: number): Promise<number[]> {
  const servers = [];
  const ports: number[] = [];
  try {
    while (ports.length < count) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      if (!portsHandedOut.has(address.port)) ports.push(address.port);
    }
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
  for (const p of ports) portsHandedOut.add(p);
  return ports;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await execFileAsync('openssl', args, { cwd });
  } catch (err) {
    const e = err as Error & { stderr?: string; code?: string };
    if (e.code === 'ENOENT')
      throw new Error('openssl is needed to make the test cluster certificates: install it');
    throw new Error(`openssl ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
  }
}

/** A throwaway CA and a serving certificate for 127.0.0.1/localhost signed by it (EC P-256, valid 7 days). */
async function makeCertificates(dir: string): Promise<void> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '7',
      '-subj',
      '/CN=capstan-test-ca',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  await openssl(
    ['req', ...ec, '-keyout', 'apiserver.key', '-out', 'apiserver.csr', '-subj', '/CN=kube-apiserver'],
    dir,
  );
  writeFileSync(
    join(dir, 'apiserver.ext'),
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc',
      '',
    ].join('\n'),
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      'apiserver.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'apiserver.crt',
      '-days',
      '7',
      '-extfile',
      'apiserver.ext',
    ],
    dir,
  );
}

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  # The API server's own loopback client (bootstrap, controllers inside the server).
  - level: None
    users: ["system:apiserver"]
  - level: None
    nonResourceURLs: ["/healthz*", "/livez*", "/readyz*"]
  - level: Metadata
`;

/**
 * Runs a binary in its own process group under a small sh wrapper that stops it when our end
 * of its stdin closes, i.e. when this Node process goes away without calling stop().
 */
function spawnSupervised(binary: string, args: string[], logPath: string): ChildProcess {
  // The binary runs as a child of sh. A background watcher (a shell builtin loop, no extra
  // process) reads the pipe from this process; when it closes, because stop() closed it or this
  // process died, the watcher kills the binary. sh exits only once the binary is gone and reaped,
  // so 'exit' means the server is down. The state is throwaway: no graceful shutdown needed.
  const script = [
    'exec 3<&0 0</dev/null',
    '"$@" 3<&- &',
    'child=$!',
    '( while read -r _; do :; done <&3; kill -KILL "$child" 2>/dev/null ) &',
    'watcher=$!',
    'exec 3<&-',
    'trap \'kill -KILL "$child" 2>/dev/null\' TERM INT HUP',
    'while :; do',
    '  wait "$child"; status=$?',
    '  kill -0 "$child" 2>/dev/null || break',
    'done',
    'kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null',
    'exit "$status"',
    '',
  ].join('\n');
  const logFd = openSync(logPath, 'a');
  try {
    const proc = spawn('/bin/sh', ['-c', script, 'sh', binary, ...args], {
      detached: true,
      stdio: ['pipe', logFd, logFd],
    });
    proc.unref();
    (proc.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    proc.stdin?.on('error', () => {});
    return proc;
  } finally {
    closeSync(logFd);
  }
}

function tail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

class StartFailure extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

function httpGet(url: string, ca: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { ca, headers: token ? { Authorization: `Bearer ${token}` } : {}, timeout: 2000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  procs: { proc: ChildProcess; name: string; log: string }[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const { proc, name, log } of procs) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        const logTail = tail(log);
        throw new StartFailure(
          `${name} exited (${proc.exitCode ?? proc.signalCode}) while waiting for ${what}; last lines of ${log}:\n${logTail}`,
          /address already in use|bind: /i.test(logTail),
        );
      }
    }
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw new StartFailure(
        `timed out after ${timeoutMs} ms waiting for ${what}; logs:\n` +
          procs.map(({ log }) => `--- ${log}\n${tail(log)}`).join('\n'),
        false,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function buildKubeConfig(
  clusterName: string,
  server: string,
  caData: string,
  identity: KubeIdentity,
  adminToken: string,
  controlPlaneToken: string,
  namespace?: string,
): { kc: KubeConfig; yaml: string } {
  let userName: string;
  let token: string;
  let impersonate: string | undefined;
  if (identity === 'admin') {
    userName = ADMIN_USERNAME;
    token = adminToken;
  } else if (identity === 'control-plane') {
    userName = CONTROL_PLANE_USERNAME;
    token = controlPlaneToken;
  } else if ('impersonate' in identity) {
    if (!identity.impersonate) throw new Error('kubeconfigFor: empty impersonate username');
    userName = `${CONTROL_PLANE_USERNAME}-as-${identity.impersonate}`;
    token = controlPlaneToken;
    impersonate = identity.impersonate;
  } else {
    userName = identity.name ?? 'token';
    token = identity.token;
  }
  const contextName = `${clusterName}/${userName}`;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: clusterName, server, caData, skipTLSVerify: false }],
    users: [{ name: userName, token, ...(impersonate ? { impersonateUser: impersonate } : {}) }],
    contexts: [
      { name: contextName, cluster: clusterName, user: userName, ...(namespace ? { namespace } : {}) },
    ],
    currentContext: contextName,
  });
  const q = (s: string) => JSON.stringify(s);
  const yaml = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${q(clusterName)}`,
    '  cluster:',
    `    server: ${q(server)}`,
    `    certificate-authority-data: ${q(caData)}`,
    'users:',
    `- name: ${q(userName)}`,
    '  user:',
    `    token: ${q(token)}`,
    ...(impersonate ? [`    as: ${q(impersonate)}`] : []),
    'contexts:',
    `- name: ${q(contextName)}`,
    '  context:',
    `    cluster: ${q(clusterName)}`,
    `    user: ${q(userName)}`,
    ...(namespace ? [`    namespace: ${q(namespace)}`] : []),
    `current-context: ${q(contextName)}`,
    '',
  ].join('\n');
  return { kc, yaml };
}

async function ensureControlPlaneRbac(admin: KubeConfig): Promise<void> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({
    body: {
      metadata: { name: CONTROL_PLANE_CLUSTER_ROLE, labels: { 'app.kubernetes.io/part-of': 'capstan' } },
      rules: [
        { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews'], verbs: ['create'] },
      ],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: CONTROL_PLANE_CLUSTER_ROLE, labels: { 'app.kubernetes.io/part-of': 'capstan' } },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: CONTROL_PLANE_CLUSTER_ROLE,
      },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: CONTROL_PLANE_USERNAME }],
    },
  });
}

async function startOnce(options: StartClusterOptions, name: string): Promise<KubeCluster> {
  const log = options.log ?? ((line: string) => console.log(line));
  const binaries = options.binaries ?? locateKubeBinaries();
  const keep = options.keepDir ?? process.env.CAPSTAN_KUBE_KEEP === '1';
  const t0 = performance.now();
  removeStaleDirs();
  const dir = mkdtempSync(join(tmpdir(), `${DIR_PREFIX}${name.replace(/[^a-zA-Z0-9-]/g, '-')}-`));
  writeFileSync(join(dir, 'owner.pid'), `${process.pid}\n`);
  if (keep) writeFileSync(join(dir, 'keep'), '');
  const record = { procs: [] as ChildProcess[], dir, keep };
  running.add(record);

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= stopNow());
  const stopNow = async (): Promise<void> => {
    const stopStart = performance.now();
    // Close the pipe and signal the wrapper (either kills the server); SIGKILL the group if stuck.
    const exited = record.procs.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.exitCode !== null || p.signalCode !== null) resolve();
          else p.once('exit', () => resolve());
        }),
    );
    for (const p of record.procs) {
      p.stdin?.destroy();
      try {
        if (p.pid !== undefined && p.exitCode === null && p.signalCode === null)
          process.kill(p.pid, 'SIGTERM');
      } catch {
        // gone
      }
    }
    const timer = setTimeout(() => record.procs.forEach((p) => killGroup(p, 'SIGKILL')), 5000);
    await Promise.all(exited);
    clearTimeout(timer);
    // Nothing of the group may linger.
    for (const p of record.procs) {
      try {
        if (p.pid !== undefined) process.kill(-p.pid, 'SIGKILL');
      } catch {
        // gone, as expected
      }
    }
    running.delete(record);
    if (!keep) rmSync(dir, { recursive: true, force: true });
    if (record.procs.length > 0) {
      log(`[capstan kube] ${name} stopped in ${((performance.now() - stopStart) / 1000).toFixed(2)}s`);
    }
  };

  try {
    const [etcdClientPort, etcdPeerPort, apiPort] = (await freePorts(3)) as [number, number, number];
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const etcdLog = join(dir, 'etcd.log');
    const etcd = spawnSupervised(
      binaries.etcd,
      [
        `--name=${name}`,
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
        `--initial-cluster=${name}=http://127.0.0.1:${etcdPeerPort}`,
        '--quota-backend-bytes=268435456',
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
      etcdLog,
    );
    record.procs.push(etcd);
    const etcdReady = waitUntil(
      'etcd /health',
      async () => {
        const res = await fetch(`${etcdUrl}/health`, { signal: AbortSignal.timeout(1000) });
        return res.ok && ((await res.json()) as { health?: string }).health === 'true';
      },
      [{ proc: etcd, name: 'etcd', log: etcdLog }],
      30_000,
    ).then(() => performance.now() - t0);
    etcdReady.catch(() => {}); // observed below

    // Meanwhile: certificates, tokens, the ServiceAccount signing key, the audit policy.
    await makeCertificates(dir);
    const caPem = readFileSync(join(dir, 'ca.crt'), 'utf8');
    const caData = Buffer.from(caPem).toString('base64');
    const adminToken = randomBytes(32).toString('hex');
    const controlPlaneToken = randomBytes(32).toString('hex');
    writeFileSync(
      join(dir, 'tokens.csv'),
      `${adminToken},${ADMIN_USERNAME},capstan-admin-uid,"system:masters"\n` +
        `${controlPlaneToken},${CONTROL_PLANE_USERNAME},capstan-control-plane-uid,"${CONTROL_PLANE_GROUP}"\n`,
      { mode: 0o600 },
    );
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'sec1', format: 'pem' }), { mode: 0o600 });
    writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    writeFileSync(join(dir, 'audit-policy.yaml'), AUDIT_POLICY);
    const auditLogPath = join(dir, 'audit.log');
    const prepareMs = performance.now() - t0;

    const etcdMs = await etcdReady;
    const apiStart = performance.now();
    const apiLog = join(dir, 'apiserver.log');
    const server = `https://127.0.0.1:${apiPort}`;
    const apiserver = spawnSupervised(
      binaries.kubeApiserver,
      [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiPort}`,
        `--tls-cert-file=${join(dir, 'apiserver.crt')}`,
        `--tls-private-key-file=${join(dir, 'apiserver.key')}`,
        `--token-auth-file=${join(dir, 'tokens.csv')}`,
        '--authorization-mode=RBAC',
        `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
        `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
        `--service-account-key-file=${join(dir, 'sa.pub')}`,
        '--service-cluster-ip-range=10.96.0.0/16',
        // No controller manager runs: don't let the server try to publish its own endpoints.
        '--endpoint-reconciler-type=none',
        `--audit-policy-file=${join(dir, 'audit-policy.yaml')}`,
        `--audit-log-path=${auditLogPath}`,
        '--audit-log-format=json',
        '--audit-log-mode=blocking',
        // Keep a test server light.
        '--enable-priority-and-fairness=false',
        '--profiling=false',
        '--v=1',
        ...(options.extraApiserverArgs ?? []),
      ],
      apiLog,
    );
    record.procs.push(apiserver);
    await waitUntil(
      'kube-apiserver /readyz',
      async () => (await httpGet(`${server}/readyz`, caPem, adminToken)).status === 200,
      [
        { proc: apiserver, name: 'kube-apiserver', log: apiLog },
        { proc: etcd, name: 'etcd', log: etcdLog },
      ],
      options.readyTimeoutMs ?? 90_000,
    );
    const apiserverMs = performance.now() - apiStart;

    const kubeconfigFor = (identity: KubeIdentity, o: { namespace?: string } = {}) =>
      buildKubeConfig(name, server, caData, identity, adminToken, controlPlaneToken, o.namespace).kc;
    const kubeconfigYamlFor = (identity: KubeIdentity, o: { namespace?: string } = {}) =>
      buildKubeConfig(name, server, caData, identity, adminToken, controlPlaneToken, o.namespace).yaml;
    const adminKubeconfig = kubeconfigFor('admin');

    const rbacStart = performance.now();
    await ensureControlPlaneRbac(adminKubeconfig);
    const rbacMs = performance.now() - rbacStart;

    // flush(): a GET of a namespace that does not exist, by a name nobody else uses, as admin.
    const sentinel = async () => {
      const marker = `capstan-audit-flush-${randomBytes(6).toString('hex')}`;
      await httpGet(`${server}/api/v1/namespaces/${marker}`, caPem, adminToken);
      return marker;
    };

    const timings: StartupTimings = {
      prepareMs,
      etcdMs,
      apiserverMs,
      rbacMs,
      totalMs: performance.now() - t0,
    };
    const s = (ms: number) => (ms / 1000).toFixed(2);
    log(
      `[capstan kube] ${name} ready at ${server} in ${s(timings.totalMs)}s ` +
        `(prepare ${s(prepareMs)}s, etcd healthy at ${s(etcdMs)}s, kube-apiserver ${s(apiserverMs)}s, ` +
        `rbac ${s(rbacMs)}s; kube-apiserver ${binaries.kubeVersion}; dir ${dir})`,
    );

    return {
      name,
      server,
      caData,
      caPem,
      adminToken,
      controlPlaneToken,
      adminKubeconfig,
      controlPlaneKubeconfig: kubeconfigFor('control-plane'),
      kubeconfigFor,
      kubeconfigYamlFor,
      auditLogPath,
      audit: new AuditLog(auditLogPath, sentinel),
      dir,
      timings,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Starts a real Kubernetes API server (kube-apiserver + its own etcd) on free loopback ports,
 * with its own CA, RBAC authorization, a static token file holding an admin identity and the
 * control-plane identity, ServiceAccount token signing, and an audit log. Several can run side
 * by side. Call stop() when done.
 *
 * Needs the binaries from test/scripts/obtain-kube-binaries.sh (or CAPSTAN_KUBE_BIN_DIR).
 */
export async function startCluster(options: StartClusterOptions = {}): Promise<KubeCluster> {
  const name = options.name ?? `kube-${++clusterCounter}`;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, name);
    } catch (err) {
      // A port taken between choosing it and binding it: choose again.
      if (err instanceof StartFailure && err.retryable && attempt < 3) continue;
      throw err;
    }
  }
}
