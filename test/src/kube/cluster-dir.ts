// The temporary directory of one cluster (certificates, tokens, etcd data, logs) and the removal
// of those left by test processes that died without stop().
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DIR_PREFIX = 'capstan-kube-';

/**
 * Removes the temporary directories of clusters whose Node process died without stop() (their
 * servers are gone already: see spawnSupervised).
 */
export function removeStaleDirs(): void {
  let entries: string[];
  try {
    entries = readdirSync(tmpdir()).filter((e) => e.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const entry of entries) {
    const dir = join(tmpdir(), entry);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8').trim());
    } catch {
      continue;
    }
    if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid) continue;
    try {
      process.kill(owner, 0);
      continue; // its owner is alive
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') continue;
    }
    if (existsSync(join(dir, 'keep'))) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A new temporary directory for cluster `name`, marked with this process as its owner. */
export function createClusterDir(name: string, keep: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), `${DIR_PREFIX}${name.replace(/[^a-zA-Z0-9-]/g, '-')}-`));
  writeFileSync(join(dir, 'owner.pid'), `${process.pid}\n`);
  if (keep) writeFileSync(join(dir, 'keep'), '');
  return dir;
}
