// What every benchmark shares: percentiles, a printed table, and bench/results/<name>.json with the
// figures, their units and the machine they were measured on. Benchmarks print; they never assert.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, hostname, release } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** The goal, as text ("≥ 10000"), when the issue sets one. */
  goal?: string;
  /** Whether the goal was met, when there is one. */
  met?: boolean;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function summarize(samples: number[]): { p50: number; p99: number; mean: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return {
    p50: percentile(s, 50),
    p99: percentile(s, 99),
    mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length),
    n: s.length,
  };
}

export function machine() {
  return {
    hostname: hostname(),
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    kernel: release(),
  };
}

const resultsDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');

export function report(name: string, figures: Figure[], notes: Record<string, unknown> = {}): void {
  const width = Math.max(...figures.map((f) => f.name.length));
  process.stdout.write(`\n${name}\n${'-'.repeat(name.length)}\n`);
  for (const f of figures) {
    const goal = f.goal
      ? `  goal ${f.goal}${f.met === undefined ? '' : f.met ? '  (met)' : '  (NOT met)'}`
      : '';
    const value = Number.isInteger(f.value) ? String(f.value) : f.value.toFixed(2);
    process.stdout.write(`${f.name.padEnd(width)}  ${value.padStart(12)} ${f.unit}${goal}\n`);
  }
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(
    join(resultsDir, `${name}.json`),
    JSON.stringify(
      { name, measuredAt: new Date().toISOString(), machine: machine(), figures, notes },
      null,
      2,
    ) + '\n',
  );
}

/**
 * CPU time (ms) used so far by the processes whose command line matches, from /proc: where the
 * machine's time goes during a round (the API server and etcd, this database's PostgreSQL backends,
 * NATS, and this process).
 */
export function cpuMsOf(match: (cmdline: string) => boolean): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!match(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '))) continue;
      // Fields 14 and 15 (utime, stime), counted after the parenthesised command name.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended between listing and reading.
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

/** Resident set size now (VmRSS) and at its peak (VmHWM) of a process, MiB, from /proc. */
export function rssMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}
