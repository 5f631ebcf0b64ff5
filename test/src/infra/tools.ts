// The Go-built tools the tests run (kube-apiserver, helm, kustomize, the OCI registry, Dex, ...):
// test/scripts/obtain-<tool>.sh builds each once into ~/.cache/capstan and prints its path.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const scripts = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts');

/** The path of an obtained tool, e.g. `obtainedTool('obtain-helm.sh')` (built first if missing). */
export function obtainedTool(script: string): string {
  return execFileSync('bash', [path.join(scripts, script), '--print-path'], { encoding: 'utf8' }).trim();
}
