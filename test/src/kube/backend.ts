// Which kind of cluster startCluster() runs: the real binaries where they are (or can be built),
// else k3s in Docker, else nothing (with an error that says what to install).
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** `binaries`: kube-apiserver + etcd processes on loopback; `k3s`: a k3s container (testcontainers). */
export type ClusterBackend = 'binaries' | 'k3s';
/** What to run: a backend, or `auto` to choose (the default; also CAPSTAN_KUBE_BACKEND). */
export type BackendChoice = ClusterBackend | 'auto';

export interface BackendFacts {
  /** kube-apiserver and etcd are where locateKubeBinaries() looks. */
  binariesPresent: boolean;
  /** A Go toolchain that test/scripts/obtain-kube-binaries.sh would use. */
  goAvailable: boolean;
  /** Whether a container runtime answers; only asked when the answer matters (it can be slow). */
  dockerAvailable: () => Promise<boolean>;
}

/**
 * `auto` picks the real binaries when they are present or buildable (startCluster then says to run
 * the obtain script if they are missing: a build takes minutes, too long for a test hook), else
 * k3s when Docker answers, else `none`.
 */
export async function chooseBackend(
  choice: BackendChoice,
  facts: BackendFacts,
): Promise<ClusterBackend | 'none'> {
  if (choice !== 'auto') return choice;
  if (facts.binariesPresent || facts.goAvailable) return 'binaries';
  return (await facts.dockerAvailable()) ? 'k3s' : 'none';
}

/** The choice from an option or CAPSTAN_KUBE_BACKEND (default `auto`); anything else is refused. */
export function backendChoice(
  option: BackendChoice | undefined,
  env: NodeJS.ProcessEnv = process.env,
): BackendChoice {
  const value = option ?? env.CAPSTAN_KUBE_BACKEND ?? 'auto';
  if (value === 'auto' || value === 'binaries' || value === 'k3s') return value;
  const source = option === undefined ? 'CAPSTAN_KUBE_BACKEND' : 'startCluster options.backend';
  throw new Error(`${source}: expected "auto", "binaries" or "k3s", got ${JSON.stringify(value)}`);
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The same search as the obtain scripts: $GO, else `go` on PATH, else /usr/local/go/bin/go. */
export function goToolchainAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  const onPath = (cmd: string) =>
    (env.PATH ?? '').split(delimiter).some((d) => d !== '' && isExecutable(join(d, cmd)));
  if (env.GO) return env.GO.includes('/') ? isExecutable(env.GO) : onPath(env.GO);
  return onPath('go') || isExecutable('/usr/local/go/bin/go');
}

/** Whether testcontainers finds a container runtime that answers (Docker, Podman, …). */
export async function dockerAvailable(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}
