import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the real kube-apiserver and etcd binaries used by the tests live. */
export interface KubeBinaries {
  /** Directory holding both binaries. */
  dir: string;
  kubeApiserver: string;
  etcd: string;
  /** Kubernetes release the binaries were built from (e.g. `v1.36.3`), or `unknown` with CAPSTAN_KUBE_BIN_DIR. */
  kubeVersion: string;
}

/** Thrown when the binaries are not there: the message says how to obtain them. */
export class KubeBinariesMissingError extends Error {
  override name = 'KubeBinariesMissingError';
}

/** test/ (the @capstan/test package root), from src/kube or dist/kube alike. */
const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The script that builds and caches the binaries. */
export const obtainScript = join(packageRoot, 'scripts', 'obtain-kube-binaries.sh');

/** The Kubernetes release pinned in test/tools/kube/go.mod. */
export function pinnedKubeVersion(): string {
  const goMod = join(packageRoot, 'tools', 'kube', 'go.mod');
  const text = readFileSync(goMod, 'utf8');
  const match = /^\s*(?:require\s+)?k8s\.io\/kubernetes\s+(v[^\s]+)/m.exec(text);
  if (!match?.[1]) throw new Error(`cannot find the pinned k8s.io/kubernetes version in ${goMod}`);
  return match[1];
}

/** The directory the binaries are expected in: CAPSTAN_KUBE_BIN_DIR, else the cache of the obtain script. */
export function kubeBinDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CAPSTAN_KUBE_BIN_DIR) return resolve(env.CAPSTAN_KUBE_BIN_DIR);
  const cacheRoot = env.CAPSTAN_CACHE ? resolve(env.CAPSTAN_CACHE) : join(homedir(), '.cache', 'capstan');
  return join(cacheRoot, 'kube', pinnedKubeVersion());
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds kube-apiserver and etcd, or throws KubeBinariesMissingError telling the user to run
 * test/scripts/obtain-kube-binaries.sh (which builds them once per machine and caches them).
 */
export function locateKubeBinaries(env: NodeJS.ProcessEnv = process.env): KubeBinaries {
  const dir = kubeBinDir(env);
  const kubeApiserver = join(dir, 'kube-apiserver');
  const etcd = join(dir, 'etcd');
  const missing = [kubeApiserver, etcd].filter((p) => !isExecutable(p));
  if (missing.length > 0) {
    const how = env.CAPSTAN_KUBE_BIN_DIR
      ? `CAPSTAN_KUBE_BIN_DIR=${env.CAPSTAN_KUBE_BIN_DIR} does not hold executable kube-apiserver and etcd; ` +
        'unset it to use the cache, or point it at a directory that has both'
      : `run \`bash ${obtainScript}\` once on this machine (it builds them from Kubernetes' own Go modules ` +
        'with the Go toolchain, a few minutes on 2 cores, and caches them)';
    throw new KubeBinariesMissingError(
      `Kubernetes test binaries not found: missing ${missing.join(' and ')}.\n` +
        `The tests run a real kube-apiserver and etcd on loopback: ${how}.`,
    );
  }
  let kubeVersion = 'unknown';
  if (!env.CAPSTAN_KUBE_BIN_DIR) kubeVersion = pinnedKubeVersion();
  return { dir, kubeApiserver, etcd, kubeVersion };
}
