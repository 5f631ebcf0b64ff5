// What identifies the engine's behaviour: a digest of the package's built code (its JavaScript and
// the Go template module), so that a reconciler that skips regenerating a set whose inputs did not
// change still regenerates once after the engine itself changed (a new Capstan version).
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CODE = /\.(js|wasm)$/;

async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const out: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await files(path)));
    else if (CODE.test(e.name)) out.push(path);
  }
  return out;
}

/** SHA-256 over the built package's code files (paths relative to it, and contents), in hex. */
export async function engineIdentity(
  root = fileURLToPath(new URL('../../dist/', import.meta.url)),
): Promise<string> {
  const hash = createHash('sha256');
  for (const path of await files(root)) {
    hash.update(`${path.slice(root.length)}\0`);
    hash.update(await readFile(path));
    hash.update('\0');
  }
  return hash.digest('hex');
}
