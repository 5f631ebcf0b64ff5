// The opening most stories share, through the real CLI as an operator does it: log in as the
// bootstrap admin, register the test cluster with its control-plane token and CA (written to files,
// as `capstan cluster add` takes them), add a repository credential with its password on stdin.
// Each step fails the story with the CLI's output when the command does not succeed.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import type { KubeCluster } from '@capstan/test/kube';
import { capstan, type CliResult } from './api-harness.js';

const ok = (r: CliResult, what: string) =>
  expect(r, `${what}: ${r.stderr}${r.stdout}`).toMatchObject({ code: 0 });

/** `capstan login` as admin with the api's bootstrap password; the context is named `admin`. */
export async function loginAdmin(
  config: string,
  api: { grpcAddress: string; adminPassword: string },
): Promise<void> {
  ok(
    await capstan(
      config,
      ['login', api.grpcAddress, '--username', 'admin', '--password-stdin', '--name', 'admin'],
      `${api.adminPassword}\n`,
    ),
    'login',
  );
}

/**
 * `capstan cluster add` in context `admin`: `cluster` registered as `name` with its control-plane
 * token (`dir`/token, mode 600) and CA (`dir`/ca.pem).
 */
export async function addCluster(
  config: string,
  dir: string,
  cluster: Pick<KubeCluster, 'server' | 'controlPlaneToken' | 'caPem'>,
  name: string,
): Promise<void> {
  const token = path.join(dir, 'token');
  const ca = path.join(dir, 'ca.pem');
  await writeFile(token, `${cluster.controlPlaneToken}\n`, { mode: 0o600 });
  await writeFile(ca, cluster.caPem);
  ok(
    await capstan(config, [
      '--context',
      'admin',
      'cluster',
      'add',
      cluster.server,
      '--name',
      name,
      '--bearer-token-file',
      token,
      '--ca-file',
      ca,
    ]),
    'cluster add',
  );
}

/** `capstan repo add` in context `admin`: `url` for `project`, the password on stdin. */
export async function addRepo(
  config: string,
  repo: { url: string; project: string; username: string; password: string },
): Promise<void> {
  ok(
    await capstan(
      config,
      [
        '--context',
        'admin',
        'repo',
        'add',
        repo.url,
        '--project',
        repo.project,
        '--username',
        repo.username,
        '--password-stdin',
      ],
      `${repo.password}\n`,
    ),
    `repo add ${repo.url}`,
  );
}
