// Background processes of the local stack: each one detached in its own process group, its output
// in .capstan/logs/<name>.log, its pid and command line in .capstan/run/<name>.json. Stopping checks
// the pid still runs the command it was started with (a pid can be reused after a reboot), sends
// SIGTERM so the process shuts down gracefully, and only then kills its group.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { paths } from './stack.js';

export interface ProcessRecord {
  name: string;
  pid: number;
  /** argv[1] of the process (its script), to recognise it later. */
  script: string;
  startedAt: string;
  log: string;
}

const recordPath = (name: string) => path.join(paths.run, `${name}.json`);
export const logPath = (name: string) => path.join(paths.logs, `${name}.log`);

export class ProcessExitedError extends Error {}

/**
 * Starts `node <script> [...args]` (or `<executable> <script> [...args]`) in the background with
 * exactly `env` (plus PATH/HOME/LANG), so nothing of the caller's environment leaks in and secrets
 * never reach argv.
 */
export function startBackground(
  name: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  executable: string = process.execPath,
): ProcessRecord {
  mkdirSync(paths.logs, { recursive: true });
  mkdirSync(paths.run, { recursive: true });
  const log = logPath(name);
  const fd = openSync(log, 'a');
  writeFileSync(fd, `\n--- ${new Date().toISOString()} capstan up: starting ${name}\n`);
  const base: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'LANG', 'TMPDIR', 'CAPSTAN_CACHE', 'GOPATH', 'GOCACHE']) {
    const value = process.env[key];
    if (value) base[key] = value;
  }
  const child = spawn(executable, [script, ...args], {
    cwd: path.dirname(paths.state),
    env: { ...base, ...env },
    stdio: ['ignore', fd, fd],
    detached: true,
  });
  closeSync(fd);
  child.unref();
  if (child.pid === undefined) throw new ProcessExitedError(`${name} did not start: see ${log}`);
  const record: ProcessRecord = { name, pid: child.pid, script, startedAt: new Date().toISOString(), log };
  writeFileSync(recordPath(name), JSON.stringify(record, null, 2) + '\n');
  return record;
}

export function readRecord(name: string): ProcessRecord | null {
  try {
    return JSON.parse(readFileSync(recordPath(name), 'utf8')) as ProcessRecord;
  } catch {
    return null;
  }
}

/** True when the pid is alive and still runs the recorded script. */
export function isRunning(record: ProcessRecord): boolean {
  try {
    const argv = readFileSync(`/proc/${record.pid}/cmdline`, 'utf8').split('\0');
    return argv[1] === record.script;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stops a recorded process (graceful first); returns false when there was nothing to stop. */
export async function stopRecorded(name: string, graceMs = 20_000): Promise<boolean> {
  const record = readRecord(name);
  if (!record) return false;
  let stopped = false;
  if (isRunning(record)) {
    process.kill(record.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (isRunning(record) && Date.now() < deadline) await sleep(100);
    if (isRunning(record)) {
      // Its own process group (detached): the group id is its pid.
      try {
        process.kill(-record.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    stopped = true;
  }
  rmSync(recordPath(name), { force: true });
  return stopped;
}

/** The last lines of a process's log, for failure messages. */
export function logTail(name: string, lines = 25): string {
  const file = logPath(name);
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** Polls `check` until it returns a value, failing early when the process dies. */
export async function waitFor<T>(
  record: ProcessRecord,
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (!isRunning(record))
      throw new ProcessExitedError(
        `${record.name} exited before ${what}; the end of ${record.log}:\n${logTail(record.name)}`,
      );
    if (Date.now() > deadline)
      throw new ProcessExitedError(
        `${record.name}: no ${what} after ${timeoutMs / 1000} s; the end of ${record.log}:\n${logTail(record.name)}`,
      );
    await sleep(250);
  }
}

/** GET http://127.0.0.1:<port>/readyz answers 200. */
export async function ready(port: number): Promise<true | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? true : undefined;
  } catch {
    return undefined;
  }
}
