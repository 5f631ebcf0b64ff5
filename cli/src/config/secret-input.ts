// Secrets never go on the command line (argv is visible to every user of the machine): they come
// from an environment variable, from stdin (--password-stdin), or from a prompt that does not echo.
import { createInterface } from 'node:readline';
import { CliError } from '../errors.js';

let stdinCache: string[] | undefined;

async function stdinLines(): Promise<string[]> {
  if (stdinCache) return stdinCache;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  stdinCache = Buffer.concat(chunks).toString('utf8').split(/\r?\n/);
  return stdinCache;
}

/** The n-th line of stdin (0-based), read once and shared by every secret of the command. */
export async function secretFromStdin(n = 0): Promise<string> {
  const line = (await stdinLines())[n];
  if (line === undefined || line === '')
    throw new CliError(`expected line ${n + 1} of stdin to hold the secret`);
  return line;
}

export async function prompt(question: string): Promise<string> {
  if (!process.stdin.isTTY)
    throw new CliError(
      `${question.replace(/:\s*$/, '')} is required (use --password-stdin or the environment)`,
    );
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const out = rl as unknown as { _writeToOutput: (s: string) => void; output: NodeJS.WritableStream };
  let asked = false;
  out._writeToOutput = (s: string) => {
    if (!asked) {
      out.output.write(s);
      asked = true;
    }
  };
  try {
    return await new Promise<string>((resolve) => rl.question(question, resolve));
  } finally {
    rl.close();
    process.stderr.write('\n');
  }
}

export async function secret(opts: {
  stdin?: boolean;
  env?: string;
  prompt: string;
  line?: number;
}): Promise<string> {
  if (opts.stdin) return secretFromStdin(opts.line ?? 0);
  const fromEnv = opts.env ? process.env[opts.env] : undefined;
  if (fromEnv) return fromEnv;
  return prompt(opts.prompt);
}
