// Process supervision for local clusters: each server runs in its own process group under a
// small sh wrapper, so it goes away with this Node process however that process ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';

/** The servers of one running cluster and the directory to remove when they are gone. */
export interface RunningCluster {
  procs: ChildProcess[];
  dir: string;
  keep: boolean;
}

const running = new Set<RunningCluster>();

// If the test process exits without stop(), don't leave servers behind. (If it dies outright,
// the wrapper below notices its stdin closing and stops the server.)
process.once('exit', () => {
  for (const r of running) {
    for (const p of r.procs) killGroup(p, 'SIGKILL');
    if (!r.keep) rmSync(r.dir, { recursive: true, force: true });
  }
});

/** Tracks a cluster until forget(): its servers are killed if this process exits first. */
export function track(dir: string, keep: boolean): RunningCluster {
  const record: RunningCluster = { procs: [], dir, keep };
  running.add(record);
  return record;
}

export function forget(record: RunningCluster): void {
  running.delete(record);
}

function isRunning(proc: ChildProcess): boolean {
  return proc.exitCode === null && proc.signalCode === null;
}

function killGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.pid === undefined || !isRunning(proc)) return;
  try {
    process.kill(-proc.pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Runs a binary in its own process group under a small sh wrapper that stops it when our end
 * of its stdin closes, i.e. when this Node process goes away without calling stop().
 */
export function spawnSupervised(binary: string, args: string[], logPath: string): ChildProcess {
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

/**
 * Stops supervised servers: closes each wrapper's pipe and signals it (either kills the server),
 * SIGKILLs the group if stuck after 5 s, and makes sure nothing of the group lingers.
 */
export async function stopSupervised(procs: ChildProcess[]): Promise<void> {
  const exited = procs.map(
    (p) =>
      new Promise<void>((resolve) => {
        if (!isRunning(p)) resolve();
        else p.once('exit', () => resolve());
      }),
  );
  for (const p of procs) {
    p.stdin?.destroy();
    try {
      if (p.pid !== undefined && isRunning(p)) process.kill(p.pid, 'SIGTERM');
    } catch {
      // gone
    }
  }
  const timer = setTimeout(() => procs.forEach((p) => killGroup(p, 'SIGKILL')), 5000);
  await Promise.all(exited);
  clearTimeout(timer);
  for (const p of procs) {
    try {
      if (p.pid !== undefined) process.kill(-p.pid, 'SIGKILL');
    } catch {
      // gone, as expected
    }
  }
}

function tail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** A start that failed; `retryable` when a port was taken between choosing and binding it. */
export class StartFailure extends Error {
  override name = 'StartFailure';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/**
 * Polls `check` every 100 ms until it holds; fails (with the servers' last log lines) when one of
 * them exits first or after `timeoutMs`.
 */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  procs: { proc: ChildProcess; name: string; log: string }[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const { proc, name, log } of procs) {
      if (!isRunning(proc)) {
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
