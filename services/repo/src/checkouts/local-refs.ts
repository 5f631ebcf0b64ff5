// Reads branch refs of a mirror straight from its files (loose ref, else packed-refs), saving a
// git process on the hot path. Only used for refs that always point at commits (branches, HEAD);
// tags and abbreviated SHAs go through `git rev-parse`, which peels and disambiguates.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { FULL_SHA } from './revision.js';

export async function readCommitRef(gitDir: string, ref: string, depth = 0): Promise<string | null> {
  if (depth > 5) return null;
  const file = path.resolve(gitDir, ref);
  if (!file.startsWith(path.resolve(gitDir) + path.sep)) return null;
  const loose = await readFile(file, 'utf8').catch(() => null);
  if (loose !== null) {
    const value = loose.trim();
    if (value.startsWith('ref: ')) return readCommitRef(gitDir, value.slice(5).trim(), depth + 1);
    return FULL_SHA.test(value) ? value : null;
  }
  const packed = await readFile(path.join(gitDir, 'packed-refs'), 'utf8').catch(() => '');
  for (const line of packed.split('\n')) {
    if (line.startsWith('#') || line.startsWith('^')) continue;
    const space = line.indexOf(' ');
    if (space === 40 && line.slice(41) === ref) return line.slice(0, 40);
  }
  return null;
}
