// Runs a rendering tool (kustomize, helm) on a checkout: isolated environment (no credentials,
// no user configuration), bounded time and output.
import { execFile } from 'node:child_process';
import { ManifestRenderError, ToolUnavailableError } from './manifest-errors.js';

export interface ToolRun {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** What is being rendered, for error messages (repository, revision, path). */
  what: string;
  /** The cause a tool reports on stdout rather than stderr (helm repo update), for the error message. */
  causeOnStdout?: (stdout: string) => string | undefined;
}

export function runRenderTool(run: ToolRun): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      run.command,
      run.args,
      {
        cwd: run.cwd,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', ...run.env },
        timeout: run.timeoutMs,
        maxBuffer: 256 * 1024 * 1024,
        killSignal: 'SIGKILL',
      },
      (err, stdout, stderr) => {
        if (!err) {
          resolve(stdout);
          return;
        }
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          reject(
            new ToolUnavailableError(`${run.command} is not installed; cannot render ${run.what}`, {
              cause: err,
            }),
          );
          return;
        }
        if ((err as { killed?: boolean }).killed) {
          reject(
            new ManifestRenderError(`${run.what}: rendering timed out after ${run.timeoutMs} ms`, {
              cause: err,
            }),
          );
          return;
        }
        const detail = String(stderr)
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
          .slice(0, 3)
          .join(' ');
        const cause = run.causeOnStdout?.(String(stdout));
        const message = [detail, cause].filter(Boolean).join(': ').slice(0, 500);
        reject(new ManifestRenderError(`${run.what}: ${message || 'rendering failed'}`));
      },
    );
  });
}
