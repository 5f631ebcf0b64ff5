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

export interface KustomizeVersion {
  path: string;
  /** That version's build options (kustomize.buildOptions.<v>), or null for the global ones. */
  buildOptions: string[] | null;
}

/** Named kustomize binaries from argocd-cm's keys (kustomize.path.<v>, kustomize.version.<v>, kustomize.buildOptions.<v>). */
export function kustomizeVersionsOf(keys: Readonly<Record<string, string>>): Map<string, KustomizeVersion> {
  const out = new Map<string, KustomizeVersion>();
  const entry = (v: string) => out.get(v) ?? { path: '', buildOptions: null };
  for (const [key, value] of Object.entries(keys).sort(([a], [b]) => a.localeCompare(b))) {
    const m = /^kustomize\.(path|version|buildOptions)\.(.+)$/.exec(key);
    if (!m) continue;
    const [, kind, version] = m as unknown as [string, string, string];
    const e = entry(version);
    if (kind === 'buildOptions') e.buildOptions = value.split(/\s+/).filter(Boolean);
    // kustomize.path.<v> wins over the older kustomize.version.<v> (Argo CD reads both).
    else if (kind === 'path' || !e.path) e.path = value;
    out.set(version, e);
  }
  for (const [v, e] of out) if (!e.path) out.delete(v);
  return out;
}
