// Runs the git CLI for checkouts. Credentials reach git only through the child's environment,
// read by a fixed askpass helper (no secret in argv, in the URL, or in any file); the machine's
// git configuration and credential helpers are switched off so nothing is stored or reused; only
// http(s) and ssh transports are allowed (no file://, no ext:: command transports).
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { directoryBytes } from './disk-cache.js';
import { GitFailedError, GitTimeoutError } from './git-errors.js';

/** What git may authenticate with for one operation; null means anonymous. */
export interface GitAuth {
  username: string;
  password?: string;
  sshPrivateKey?: string;
  insecure?: boolean;
  /** Helm only: the credential's OCI registry is reached over plain HTTP (insecureOCIForceHttp). */
  ociPlainHttp?: boolean;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
  /** Set when the command was stopped because the watched directories outgrew the size limit. */
  exceededBytes?: number;
}

/** Directories a command may fill, and how far (a download is stopped as soon as it is too big). */
export interface SizeLimit {
  dirs: string[];
  maxBytes: number;
}

const ASKPASS_SCRIPT = `#!/bin/sh
# Capstan's askpass helper: answers git's prompts from the environment of this git process
# only. It holds no secret itself.
case "$1" in
  Username*) printf '%s\\n' "$CAPSTAN_GIT_USERNAME" ;;
  *) printf '%s\\n' "$CAPSTAN_GIT_PASSWORD" ;;
esac
`;

const SAFE_CONFIG = [
  '-c',
  'credential.helper=',
  '-c',
  'protocol.allow=never',
  '-c',
  'protocol.http.allow=always',
  '-c',
  'protocol.https.allow=always',
  '-c',
  'protocol.ssh.allow=always',
  '-c',
  'advice.detachedHead=false',
  '-c',
  'gc.auto=0',
];

export class GitRunner {
  private constructor(
    private readonly askpassPath: string,
    private readonly scratchDir: string,
    private readonly timeoutMs: number,
    /** known_hosts trusted for SSH remotes; without one only `insecure` credentials reach SSH hosts. */
    private readonly knownHostsFile: string,
  ) {}

  /** Installs the askpass helper (mode 0700) under `toolDir`. */
  static async create(opts: {
    toolDir: string;
    timeoutMs: number;
    knownHostsFile?: string;
  }): Promise<GitRunner> {
    await mkdir(opts.toolDir, { recursive: true, mode: 0o700 });
    await chmod(opts.toolDir, 0o700);
    const askpassPath = path.join(opts.toolDir, 'askpass.sh');
    await writeFile(askpassPath, ASKPASS_SCRIPT, { mode: 0o700 });
    await chmod(askpassPath, 0o700);
    const scratchDir = path.join(opts.toolDir, 'scratch');
    await mkdir(scratchDir, { recursive: true, mode: 0o700 });
    return new GitRunner(askpassPath, scratchDir, opts.timeoutMs, opts.knownHostsFile || '/dev/null');
  }

  /** Runs git; resolves with the result whatever the exit code (callers classify failures). */
  async run(
    args: string[],
    opts: {
      cwd?: string;
      auth?: GitAuth | null;
      timeoutMs?: number;
      env?: Record<string, string>;
      sizeLimit?: SizeLimit;
      /** Extra `-c key=value` pairs (the egress pin of a network operation). */
      config?: string[];
    } = {},
  ): Promise<GitResult> {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.scratchDir,
      LANG: 'C',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: this.askpassPath,
      // An anonymous fetch answers prompts with nothing, so a protected repository fails cleanly.
      CAPSTAN_GIT_USERNAME: '',
      CAPSTAN_GIT_PASSWORD: '',
      GIT_SSH_COMMAND: this.sshCommand(false, null),
      ...opts.env,
    };
    const config = [...SAFE_CONFIG, ...(opts.config ?? [])];
    let keyDir: string | null = null;
    const auth = opts.auth ?? null;
    if (auth) {
      env.CAPSTAN_GIT_USERNAME = auth.username;
      env.CAPSTAN_GIT_PASSWORD = auth.password ?? '';
      if (auth.insecure) config.push('-c', 'http.sslVerify=false');
      if (auth.sshPrivateKey) {
        // ssh only reads identities from files: a 0600 file in a fresh 0700 directory, removed as
        // soon as the command ends. Its path (not its content) is on ssh's command line.
        keyDir = await mkdtemp(path.join(this.scratchDir, 'ssh-'));
        const keyFile = path.join(keyDir, 'id');
        await writeFile(
          keyFile,
          auth.sshPrivateKey.endsWith('\n') ? auth.sshPrivateKey : auth.sshPrivateKey + '\n',
          { mode: 0o600 },
        );
        env.GIT_SSH_COMMAND = this.sshCommand(Boolean(auth.insecure), keyFile);
      }
    }
    try {
      return await this.spawn(
        [...config, ...args],
        env,
        opts.cwd,
        opts.timeoutMs ?? this.timeoutMs,
        opts.sizeLimit,
      );
    } finally {
      if (keyDir) await rm(keyDir, { recursive: true, force: true });
    }
  }

  /** ssh as git runs it: no user configuration, no prompts, only the given identity and known hosts. */
  private sshCommand(insecure: boolean, keyFile: string | null): string {
    const hostKeys = insecure
      ? '-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'
      : `-o StrictHostKeyChecking=yes -o UserKnownHostsFile='${this.knownHostsFile}'`;
    const identity = keyFile ? ` -i '${keyFile}'` : '';
    return `ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -o GlobalKnownHostsFile=/dev/null ${hostKeys}${identity}`;
  }

  /** Runs git and throws when it fails (for local, non-network commands). */
  async ok(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<string> {
    const result = await this.run(args, opts);
    if (result.code !== 0)
      throw new GitFailedError(`git ${args[0]} failed: ${result.stderr.trim().split('\n')[0] ?? ''}`);
    return result.stdout;
  }

  private spawn(
    args: string[],
    env: NodeJS.ProcessEnv,
    cwd: string | undefined,
    timeoutMs: number,
    sizeLimit: SizeLimit | undefined,
  ): Promise<GitResult> {
    return new Promise((resolve, reject) => {
      // Its own process group, so stopping it also stops git's helpers (remote-http, index-pack).
      const child = spawn('git', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      const stop = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => out.push(c));
      child.stderr.on('data', (c: Buffer) => err.push(c));
      let timedOut = false;
      let exceededBytes: number | undefined;
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, timeoutMs);
      let measuring = false;
      const watcher = sizeLimit
        ? setInterval(() => {
            if (measuring) return;
            measuring = true;
            void Promise.all(sizeLimit.dirs.map((d) => directoryBytes(d)))
              .then((sizes) => {
                const total = sizes.reduce((a, b) => a + b, 0);
                if (total > sizeLimit.maxBytes && exceededBytes === undefined) {
                  exceededBytes = total;
                  stop();
                }
              })
              .finally(() => (measuring = false));
          }, 250)
        : null;
      const done = () => {
        clearTimeout(timer);
        if (watcher) clearInterval(watcher);
      };
      child.on('error', (e) => {
        done();
        reject(new GitFailedError('cannot run git', { cause: e }));
      });
      child.on('close', (code) => {
        done();
        if (timedOut) {
          reject(
            new GitTimeoutError(
              `git ${args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? ''} timed out after ${timeoutMs} ms`,
            ),
          );
          return;
        }
        resolve({
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          code: code ?? -1,
          ...(exceededBytes !== undefined ? { exceededBytes } : {}),
        });
      });
    });
  }
}
