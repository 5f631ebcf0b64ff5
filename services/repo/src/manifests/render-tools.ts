// Where the rendering tools are: an explicit path from configuration, else the binary the
// project's obtain scripts cache (${CAPSTAN_CACHE:-~/.cache/capstan}/<tool>/<version>/<tool>,
// newest version first), else the tool on PATH.
import { access, readdir } from 'node:fs/promises';
import { constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

async function executable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

export async function locateTool(
  tool: 'kustomize' | 'helm' | 'jsonnet',
  configured?: string,
): Promise<string | null> {
  // The jsonnet tool is go-jsonnet with a confined importer, named capstan-jsonnet (obtain-jsonnet.sh).
  const binary = tool === 'jsonnet' ? 'capstan-jsonnet' : tool;
  if (configured) return configured;
  const cacheRoot = process.env.CAPSTAN_CACHE ?? path.join(os.homedir(), '.cache', 'capstan');
  const versions = await readdir(path.join(cacheRoot, tool)).catch(() => [] as string[]);
  const newest = versions
    .filter((v) => /^v\d/.test(v))
    .sort((a, b) => b.localeCompare(a, undefined, { numeric: true }));
  for (const version of newest) {
    const candidate = path.join(cacheRoot, tool, version, binary);
    if (await executable(candidate)) return candidate;
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && (await executable(path.join(dir, binary)))) return path.join(dir, binary);
  }
  return null;
}
