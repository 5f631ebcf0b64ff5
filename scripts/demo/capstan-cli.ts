// Runs the real `capstan` CLI (cli/bin/capstan.js) as the user would, echoing the command and
// streaming its output, indented, as it comes (so `app sync` shows its live progress). Secrets go
// to its stdin, never its argv.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { installation, paths, repoRoot } from './stack.js';

const bin = path.join(repoRoot, 'cli/bin/capstan.js');

export class CliFailedError extends Error {}

export interface CliRun {
  code: number;
  stdout: string;
}

/** Rejects when the CLI exits non-zero, unless `expectFailure` (a refusal the story shows on purpose). */
export function capstan(
  args: string[],
  options: {
    stdin?: string;
    quiet?: boolean;
    expectFailure?: boolean;
    /** Call as this token (a project role's, as a CI system would: CAPSTAN_AUTH_TOKEN, never argv). */
    token?: string;
    /** Another person's CLI configuration (CAPSTAN_CONFIG): the admin's context stays untouched. */
    config?: string;
    /** Sees the CLI's stderr as it comes (e.g. the URL `login --sso` asks to open). */
    onStderr?: (text: string) => void;
  } = {},
): Promise<CliRun> {
  // The context `npm run up` logged in to must decide the server and token, not leftovers.
  const env = { ...process.env };
  delete env.CAPSTAN_SERVER;
  delete env.CAPSTAN_AUTH_TOKEN;
  if (options.token) {
    env.CAPSTAN_SERVER = installation.apiAddress;
    env.CAPSTAN_AUTH_TOKEN = options.token;
  }
  if (options.config) env.CAPSTAN_CONFIG = options.config;
  // The api's gRPC port speaks TLS signed by the stack's own CA (the compose test's: its own).
  env.CAPSTAN_SERVER_CRT = process.env.CAPSTAN_DEMO_SERVER_CRT ?? path.join(paths.pki, 'ca.crt');
  if (!options.quiet) process.stdout.write(`\n    $ capstan ${args.map(shellWord).join(' ')}\n`);
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: repoRoot,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end(options.stdin ?? '');
  let stdout = '';
  let stderr = '';
  const echo = (chunk: string, carry: { rest: string }) => {
    const lines = (carry.rest + chunk).split('\n');
    carry.rest = lines.pop() ?? '';
    if (!options.quiet) for (const l of lines) process.stdout.write(`    ${l}\n`);
  };
  const out = { rest: '' };
  const err = { rest: '' };
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
    echo(c, out);
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
    echo(c, err);
    options.onStderr?.(stderr);
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (!options.quiet)
        for (const rest of [out.rest, err.rest]) if (rest) process.stdout.write(`    ${rest}\n`);
      if (code === 0 || (options.expectFailure && code !== null)) resolve({ code: code ?? 0, stdout });
      else
        reject(
          new CliFailedError(
            `capstan ${args[0]} ${args[1] ?? ''} exited with ${code}${options.quiet ? `: ${stderr.trim()}` : ''}`,
          ),
        );
    });
  });
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
