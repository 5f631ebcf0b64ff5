// A real git server over HTTP for tests: git's own `git http-backend` (CGI) behind a small Node
// HTTP server on a free loopback port, with HTTP basic-auth credentials per repository. Clients
// talk the real smart-HTTP protocol (v0 and v2), so authentication failures, missing
// revisions and fetch behaviour are git's, not an imitation's.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { timingSafeEqual } from 'node:crypto';
import { git, isolatedGitEnv } from './git-command.js';
import { TestRepository } from './repository.js';
import { startSshTransport, type SshTransport } from './ssh-transport.js';

export interface BasicCredential {
  username: string;
  password: string;
}

export interface CreateRepositoryOptions {
  /** Accepted credentials; when empty or absent the repository is readable anonymously. */
  credentials?: BasicCredential[];
  /** Public keys (`ssh-ed25519 AAAA…`) authorised over SSH, when the server runs SSH. */
  sshKeys?: string[];
  /** Serve HTTP responses at most this fast (bytes per second), to watch a client mid-download. */
  throttleBytesPerSecond?: number;
}

/** One HTTP request the server answered, for tests that assert who fetched what. */
export interface GitRequestRecord {
  repository: string;
  /** The authenticated username, or null when anonymous or refused. */
  username: string | null;
  status: number;
  service: string | null;
}

export interface GitServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly baseUrl: string;
  /** Every request answered so far, oldest first. */
  readonly requests: readonly GitRequestRecord[];
  createRepository(name: string, options?: CreateRepositoryOptions): Promise<TestRepository>;
  /** Replaces the accepted credentials of a repository (e.g. to simulate a rotated password). */
  setCredentials(name: string, credentials: BasicCredential[]): void;
  /** The SSH side, when started with `{ ssh: true }`. */
  readonly ssh: Omit<SshTransport, 'close'> | null;
  /** Replaces the public keys authorised for a repository over SSH. */
  setSshKeys(name: string, keys: string[]): void;
  close(): Promise<void>;
}

const REPO_NAME = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\.git$/;

export async function startGitServer(options: { root?: string; ssh?: boolean } = {}): Promise<GitServer> {
  const root = options.root ?? (await mkdtemp(path.join(os.tmpdir(), 'capstan-git-')));
  const projectRoot = path.join(root, 'srv');
  await mkdir(projectRoot, { recursive: true });
  const access = new Map<string, BasicCredential[]>();
  const throttles = new Map<string, number>();
  const requests: GitRequestRecord[] = [];
  const sshKeys = new Map<string, string[]>();
  const ssh = options.ssh
    ? await startSshTransport({
        repository: (name) =>
          access.has(name)
            ? { bareDir: path.join(projectRoot, name), keys: sshKeys.get(name) ?? [] }
            : undefined,
        knownKeys: () => [...sshKeys.values()].flat(),
      })
    : null;

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`test git server error: ${String(err)}\n`);
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/(.+?\.git)(\/.*)$/.exec(decodeURIComponent(url.pathname));
    const service = url.searchParams.get('service') ?? (match?.[2]?.replace(/^\//, '') || null);
    const repository = match?.[1] ?? '';
    const record = (status: number, username: string | null) =>
      requests.push({ repository, username, status, service });
    if (!match || !access.has(repository)) {
      record(404, null);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('repository not found\n');
      return;
    }
    // Pushes go through the helpers, never over HTTP: this server is read-only for clients.
    if (service === 'git-receive-pack' || match[2] === '/git-receive-pack') {
      record(403, null);
      res.writeHead(403, { 'content-type': 'text/plain' }).end('read-only\n');
      return;
    }
    const allowed = access.get(repository) ?? [];
    let username: string | null = null;
    if (allowed.length > 0) {
      username = authenticate(req.headers.authorization, allowed);
      if (username === null) {
        record(401, null);
        res.writeHead(401, {
          'www-authenticate': 'Basic realm="capstan-test-git"',
          'content-type': 'text/plain',
        });
        res.end('authentication required\n');
        return;
      }
    }
    const status = await runBackend(req, res, {
      throttle: throttles.get(repository),
      pathInfo: repository + (match[2] ?? ''),
      query: url.search.slice(1),
      username,
    });
    record(status, username);
  }

  async function runBackend(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    cgi: { pathInfo: string; query: string; username: string | null; throttle: number | undefined },
  ): Promise<number> {
    const env: NodeJS.ProcessEnv = {
      ...isolatedGitEnv,
      GIT_PROJECT_ROOT: projectRoot,
      GIT_HTTP_EXPORT_ALL: '1',
      GATEWAY_INTERFACE: 'CGI/1.1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: '/' + cgi.pathInfo,
      QUERY_STRING: cgi.query,
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
      REMOTE_USER: cgi.username ?? '',
      HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
      GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
    };
    if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
    const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    req.pipe(child.stdin);
    child.stdin.on('error', () => undefined);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let head = Buffer.alloc(0);
    let status = 200;
    let headersDone = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (cgi.throttle) {
        child.stdout.pause();
        setTimeout(() => child.stdout.resume(), (chunk.length / cgi.throttle) * 1000);
      }
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = findHeaderEnd(head);
      if (!end) return;
      headersDone = true;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end.at).toString('latin1').split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end.at + end.length));
    });
    const [code] = (await once(child, 'close')) as [number | null];
    if (!headersDone) {
      status = 500;
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.write(`git http-backend exited ${code}: ${stderr}`);
    }
    res.end();
    return status;
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    baseUrl,
    requests,
    async createRepository(name, createOptions = {}) {
      if (!REPO_NAME.test(name) || name.split('/').some((part) => part.startsWith('.'))) {
        throw new Error(
          `invalid test repository name ${JSON.stringify(name)}: use path segments ending in .git`,
        );
      }
      if (access.has(name)) throw new Error(`test repository ${name} already exists`);
      const bareDir = path.join(projectRoot, name);
      const workDir = path.join(root, 'work', name);
      await mkdir(bareDir, { recursive: true });
      await mkdir(workDir, { recursive: true });
      await git(bareDir, ['init', '--quiet', '--bare', '--initial-branch=main']);
      // Clients may fetch any reachable commit by SHA, as GitHub and GitLab allow.
      await git(bareDir, ['config', 'uploadpack.allowReachableSHA1InWant', 'true']);
      await git(workDir, ['init', '--quiet', '--initial-branch=main']);
      await git(workDir, ['remote', 'add', 'origin', bareDir]);
      access.set(name, [...(createOptions.credentials ?? [])]);
      if (createOptions.throttleBytesPerSecond) throttles.set(name, createOptions.throttleBytesPerSecond);
      sshKeys.set(name, [...(createOptions.sshKeys ?? [])]);
      const sshUrl = ssh ? `ssh://git@127.0.0.1:${ssh.port}/${name}` : '';
      return new TestRepository(name, `${baseUrl}/${name}`, bareDir, workDir, sshUrl);
    },
    ssh: ssh ? { port: ssh.port, knownHostsLine: ssh.knownHostsLine, requests: ssh.requests } : null,
    setSshKeys(name, keys) {
      if (!access.has(name)) throw new Error(`test repository ${name} does not exist`);
      sshKeys.set(name, [...keys]);
    },
    setCredentials(name, credentials) {
      if (!access.has(name)) throw new Error(`test repository ${name} does not exist`);
      access.set(name, [...credentials]);
    },
    async close() {
      await ssh?.close();
      server.closeAllConnections();
      server.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

function authenticate(header: string | undefined, allowed: BasicCredential[]): string | null {
  if (!header?.startsWith('Basic ')) return null;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const username = decoded.slice(0, colon);
  const password = Buffer.from(decoded.slice(colon + 1));
  for (const credential of allowed) {
    const expected = Buffer.from(credential.password);
    if (
      credential.username === username &&
      expected.length === password.length &&
      timingSafeEqual(expected, password)
    ) {
      return username;
    }
  }
  return null;
}

function findHeaderEnd(buffer: Buffer): { at: number; length: number } | null {
  const crlf = buffer.indexOf('\r\n\r\n');
  const lf = buffer.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { at: crlf, length: 4 };
  if (lf >= 0) return { at: lf, length: 2 };
  return null;
}
