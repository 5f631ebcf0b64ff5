// The etcd behind one local kube-apiserver: a single throwaway member on loopback.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { spawnSupervised, waitUntil } from './supervision.js';

export interface StartedEtcd {
  proc: ChildProcess;
  /** http://127.0.0.1:<client port> (what --etcd-servers takes) */
  url: string;
  log: string;
  /** Resolves once /health says true; rejects if etcd exits or is not healthy within 30 s. */
  ready: Promise<void>;
}

/** Starts etcd with its data and log (etcd.log) in `dir`; does not wait for it. */
export function startEtcd(
  binary: string,
  name: string,
  dir: string,
  ports: { client: number; peer: number },
): StartedEtcd {
  const url = `http://127.0.0.1:${ports.client}`;
  const peerUrl = `http://127.0.0.1:${ports.peer}`;
  const log = join(dir, 'etcd.log');
  const proc = spawnSupervised(
    binary,
    [
      `--name=${name}`,
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=${name}=${peerUrl}`,
      // Test data is small and throwaway: a small quota, and no fsync (the biggest cost on CI disks).
      '--quota-backend-bytes=268435456',
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
    log,
  );
  const ready = waitUntil(
    'etcd /health',
    async () => {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      return res.ok && ((await res.json()) as { health?: string }).health === 'true';
    },
    [{ proc, name: 'etcd', log }],
    30_000,
  );
  ready.catch(() => {}); // the caller observes it
  return { proc, url, log, ready };
}
