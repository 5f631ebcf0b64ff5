// What every check of deploy/validate.mjs shares: the list of failures, and small readers.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Every failed check, in the order found; validate.mjs prints them and exits 1. */
export const failures = [];

export const check = (ok, what) => {
  if (!ok) failures.push(what);
};

/** KEY=VALUE lines (as generate-secrets.sh and .env.example write them), comments and blanks skipped. */
export function readEnvFile(file) {
  const out = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

/** Runs a command to completion: its status, stdout and stderr, never a throw. */
export function spawnResult(command, args, options = {}) {
  try {
    const stdout = execFileSync(command, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      ...options,
    });
    return { status: 0, stdout, stderr: '' };
  } catch (err) {
    return { status: err.status ?? 1, stdout: err.stdout ?? '', stderr: err.stderr ?? err.message };
  }
}
