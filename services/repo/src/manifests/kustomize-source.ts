// Kustomize applications: `kustomize build` of the application directory. Kustomize's own load
// restrictor keeps file references inside the kustomization root's repository; exec plugins and
// Helm inflation stay off (their defaults).
import { access } from 'node:fs/promises';
import path from 'node:path';
import { parseManifests, type KubeObject } from './manifest-documents.js';
import { runRenderTool } from './render-tool.js';

export const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

export async function isKustomization(appDir: string): Promise<boolean> {
  for (const name of KUSTOMIZATION_FILES) {
    if (
      await access(path.join(appDir, name)).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}

export async function renderKustomize(opts: {
  kustomize: string;
  appDir: string;
  scratchHome: string;
  timeoutMs: number;
  what: string;
}): Promise<KubeObject[]> {
  const out = await runRenderTool({
    command: opts.kustomize,
    args: ['build', '.'],
    cwd: opts.appDir,
    env: { HOME: opts.scratchHome, XDG_CONFIG_HOME: opts.scratchHome },
    timeoutMs: opts.timeoutMs,
    what: opts.what,
  });
  return parseManifests(out, `${opts.what} (kustomize output)`, 'yaml');
}
