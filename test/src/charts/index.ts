// Real chart repositories for tests: a Helm repository (a node:http server with basic auth serving
// an index.yaml and .tgz archives made by the real `helm package` / `helm repo index`) and an OCI
// registry (CNCF Distribution built by test/scripts/obtain-registry.sh, htpasswd auth; charts
// pushed with the real `helm push`). Both listen on this host's first non-loopback address, since
// helm (Go) never sends loopback URLs through the egress proxy under test; both serve plain HTTP, or
// HTTPS with a self-signed certificate (`selfSignedCertificate`), which helm reaches through the
// proxy's CONNECT tunnel.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** This host's first non-internal IPv4 address (helm proxies every request to it). */
export function hostAddress(): string {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  throw new Error('no non-loopback IPv4 address on this host');
}

export interface TlsCertificate {
  cert: Buffer;
  key: Buffer;
  certFile: string;
  keyFile: string;
}

/** A self-signed certificate (openssl) for this host's address: trusted by no one by default. */
export async function selfSignedCertificate(dir: string): Promise<TlsCertificate> {
  await mkdir(dir, { recursive: true });
  const certFile = path.join(dir, 'tls.crt');
  const keyFile = path.join(dir, 'tls.key');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=capstan-test-charts',
    '-addext',
    `subjectAltName=IP:${hostAddress()}`,
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ]);
  return { cert: await readFile(certFile), key: await readFile(keyFile), certFile, keyFile };
}

export interface ChartSpec {
  name: string;
  version: string;
  /** Extra files of the chart (relative path → content); a ConfigMap template is always there. */
  files?: Record<string, string>;
  chartYamlExtra?: string;
}

/** Writes a chart directory and packages it with the real helm; returns the .tgz path. */
export async function packageChart(helm: string, dir: string, spec: ChartSpec): Promise<string> {
  const src = path.join(dir, 'src', `${spec.name}-${spec.version}`, spec.name);
  const files: Record<string, string> = {
    'Chart.yaml': `apiVersion: v2\nname: ${spec.name}\nversion: ${spec.version}\n${spec.chartYamlExtra ?? ''}`,
    'values.yaml': 'greeting: hello\n',
    'templates/cm.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\ndata:\n  version: {{ .Chart.Version | quote }}\n  greeting: {{ .Values.greeting | quote }}\n',
    ...spec.files,
  };
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(src, file)), { recursive: true });
    await writeFile(path.join(src, file), content);
  }
  const out = path.join(dir, 'packages');
  await mkdir(out, { recursive: true });
  const home = await mkdtemp(path.join(dir, 'helm-home-'));
  await run(helm, ['package', src, '--destination', out], {
    env: { PATH: process.env.PATH ?? '', HOME: home },
  });
  return path.join(out, `${spec.name}-${spec.version}.tgz`);
}

export interface ChartRepositoryServer {
  url: string;
  /** Requests seen: path and the user that authenticated ('' when none). */
  requests: { path: string; user: string }[];
  /** Answers `path` with a redirect to `location` from now on. */
  redirect(path: string, location: string): void;
  close(): Promise<void>;
}

/** A Helm repository with basic auth (`users`: name → password) serving the packaged charts. */
export async function startChartRepository(opts: {
  helm: string;
  dir: string;
  charts: ChartSpec[];
  users: Record<string, string>;
  /** Serve HTTPS with this certificate (else plain HTTP). */
  tls?: TlsCertificate;
}): Promise<ChartRepositoryServer> {
  const requests: { path: string; user: string }[] = [];
  const redirects = new Map<string, string>();
  const files = new Map<string, Buffer>();
  const handler: http.RequestListener = (req, res) => {
    const auth = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [user = '', pass] = auth ? Buffer.from(auth, 'base64').toString().split(':') : [];
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ path: p, user: auth ? user : '' });
    if (!auth || opts.users[user] !== pass) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="charts"' }).end();
      return;
    }
    const to = redirects.get(p);
    if (to) {
      res.writeHead(302, { Location: to }).end();
      return;
    }
    const body = files.get(p);
    if (!body) res.writeHead(404).end();
    else res.writeHead(200).end(body);
  };
  const server = opts.tls
    ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key }, handler)
    : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const scheme = opts.tls ? 'https' : 'http';
  const url = `${scheme}://${hostAddress()}:${(server.address() as AddressInfo).port}`;
  for (const spec of opts.charts) {
    const tgz = await packageChart(opts.helm, opts.dir, spec);
    files.set(`/charts/${path.basename(tgz)}`, await readFile(tgz));
  }
  const home = await mkdtemp(path.join(opts.dir, 'helm-home-'));
  const pkgDir = path.join(opts.dir, 'packages');
  await run(opts.helm, ['repo', 'index', pkgDir, '--url', `${url}/charts`], {
    env: { PATH: process.env.PATH ?? '', HOME: home },
  });
  files.set('/index.yaml', await readFile(path.join(pkgDir, 'index.yaml')));
  return {
    url,
    requests,
    redirect: (from, to) => redirects.set(from, to),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface OciRegistry {
  /** oci://<host>:<port>/charts */
  url: string;
  host: string;
  /** Pushes a chart with the real `helm push` as `user`. */
  push(spec: ChartSpec, user: string, password: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * CNCF Distribution with htpasswd users (name → bcrypt hash) on this host's address: plain HTTP, or
 * HTTPS with `tls` (a certificate no one trusts: clients skip verification, as `insecure` does).
 */
export async function startOciRegistry(opts: {
  registry: string;
  helm: string;
  dir: string;
  htpasswd: Record<string, string>;
  tls?: TlsCertificate;
}): Promise<OciRegistry> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '0.0.0.0', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  await mkdir(path.join(opts.dir, 'storage'), { recursive: true });
  const htpasswd = path.join(opts.dir, 'htpasswd');
  await writeFile(
    htpasswd,
    Object.entries(opts.htpasswd)
      .map(([u, h]) => `${u}:${h}\n`)
      .join(''),
  );
  const config = path.join(opts.dir, 'config.yml');
  await writeFile(
    config,
    `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${opts.dir}/storage\nhttp:\n  addr: 0.0.0.0:${port}\n${
      opts.tls ? `  tls:\n    certificate: ${opts.tls.certFile}\n    key: ${opts.tls.keyFile}\n` : ''
    }auth:\n  htpasswd:\n    realm: capstan\n    path: ${htpasswd}\n`,
  );
  const child: ChildProcess = spawn(opts.registry, ['serve', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const host = `${hostAddress()}:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = await probeStatus(`${opts.tls ? 'https' : 'http'}://${host}/v2/`);
    if (status === 401 || status === 200) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`registry did not start: ${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const url = `oci://${host}/charts`;
  return {
    url,
    host,
    async push(spec, user, password) {
      const work = await mkdtemp(path.join(opts.dir, 'push-'));
      const tgz = await packageChart(opts.helm, work, spec);
      const registryConfig = path.join(work, 'registry.json');
      const auth = Buffer.from(`${user}:${password}`).toString('base64');
      await writeFile(registryConfig, JSON.stringify({ auths: { [host]: { auth } } }), { mode: 0o600 });
      await run(opts.helm, ['push', tgz, url, opts.tls ? '--insecure-skip-tls-verify' : '--plain-http'], {
        env: { PATH: process.env.PATH ?? '', HOME: work, HELM_REGISTRY_CONFIG: registryConfig },
      });
      await rm(work, { recursive: true, force: true });
    },
    async close() {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    },
  };
}

/** The HTTP status of a GET (0 when nothing answers); a self-signed certificate is accepted. */
function probeStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const get = url.startsWith('https:') ? https.get : http.get;
    const req = get(url, { rejectUnauthorized: false, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}
