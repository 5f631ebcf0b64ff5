// kustomize and helm: the binaries test/scripts/obtain-*.sh build (the ones the repo service is tested
// with), and the Dockerfile's pins of the same versions.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { check } from './report.mjs';

/** The path of the binary test/scripts/obtain-<tool>.sh built (building it first if needed). */
export function obtainTool(repoRoot, tool) {
  return execFileSync('bash', [path.join(repoRoot, `test/scripts/obtain-${tool}.sh`), '--print-path'], {
    encoding: 'utf8',
  }).trim();
}

/** The Dockerfile's tools-from-source stage builds kustomize and helm at the versions tested. */
export function checkToolPins(repoRoot, deployDir) {
  const dockerfile = readFileSync(path.join(deployDir, 'Dockerfile'), 'utf8');
  for (const [tool, arg] of [
    ['kustomize', 'KUSTOMIZE_VERSION'],
    ['helm', 'HELM_VERSION'],
  ]) {
    const script = readFileSync(path.join(repoRoot, `test/scripts/obtain-${tool}.sh`), 'utf8');
    const tested = new RegExp(`\\$\\{${arg}:-([^}]+)\\}`).exec(script)?.[1];
    const imaged = new RegExp(`^ARG ${arg}=(\\S+)$`, 'm').exec(dockerfile)?.[1];
    check(
      tested !== undefined && tested === imaged,
      `Dockerfile: ${arg}=${imaged}, test/scripts/obtain-${tool}.sh uses ${tested}`,
    );
  }
}
