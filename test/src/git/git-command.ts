// Runs the git CLI for the test server's own bookkeeping (creating repositories, committing
// content). Isolated from the machine's git configuration so tests behave the same everywhere.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export const isolatedGitEnv: NodeJS.ProcessEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Capstan Test',
  GIT_AUTHOR_EMAIL: 'test@capstan.invalid',
  GIT_COMMITTER_NAME: 'Capstan Test',
  GIT_COMMITTER_EMAIL: 'test@capstan.invalid',
  LANG: 'C',
};

export class GitCommandError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'GitCommandError';
  }
}

export async function git(cwd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync('git', args, {
      cwd,
      env: isolatedGitEnv,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '');
    throw new GitCommandError(`git ${args[0]} failed in ${cwd}: ${stderr.trim()}`, stderr, { cause: err });
  }
}
