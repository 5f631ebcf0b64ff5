// Git generators through the real repo service (its built process, configured as in production:
// mutual TLS with the run's PKI, appset's token, the api's delegation key) reading a real git server:
// the set's Applications follow the repository's directories, the repo service records the reads as
// the delegated user, and a push regenerates the set without anyone calling the API.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitPush, newEvent } from '@capstan/events';
import type { appsetv1 } from '@capstan/proto';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import {
  createTestBus,
  createTestDatabase,
  testPki,
  type TestBus,
  type TestDatabase,
} from '@capstan/test/infra';
import { DelegationIssuer, delegationPrivateKey } from '@capstan/service-identity';
import { startHarness, type Harness } from '../test-support/harness.js';

const repoMain = fileURLToPath(new URL('../../../repo/dist/main.js', import.meta.url));

/** The repo service's built process; resolves with its gRPC address once it has started. */
async function startRepoService(
  env: Record<string, string>,
): Promise<{ address: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [repoMain], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      CAPSTAN_HTTP_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`repo did not start:\n${out}`)), 90_000);
    const onData = (c: Buffer) => {
      out += c.toString();
      const port = /"grpcPort":(\d+)/.exec(out);
      if (port && out.includes('service started')) {
        clearTimeout(timer);
        resolve(`127.0.0.1:${port[1]}`);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`repo exited with ${code}:\n${out}`)));
  });
  return { address, child };
}

describe('git generators through the repo service', () => {
  let git: GitServer;
  let apps: TestRepository;
  let repoDb: TestDatabase;
  let repoBus: TestBus;
  let repo: { address: string; child: ChildProcess };
  let cache: string;
  let h: Harness;
  let caller: { api: string; repo: string };

  beforeAll(async () => {
    const pki = await testPki();
    const token = randomBytes(24).toString('hex');
    [git, repoDb, cache] = await Promise.all([
      startGitServer(),
      createTestDatabase(),
      mkdtemp(path.join(os.tmpdir(), 'capstan-appset-repo-')),
    ]);
    apps = await git.createRepository('team-a/apps.git');
    await apps.commit({ 'apps/a/cm.yaml': 'kind: ConfigMap\n', 'apps/b/cm.yaml': 'kind: ConfigMap\n' });
    // The repo service and appset share one bus namespace, so the repo's events reach appset's consumers.
    repoBus = await createTestBus();
    repo = await startRepoService({
      DATABASE_URL: repoDb.url,
      ...repoBus.env('repo'),
      ...pki.env('repo'),
      CAPSTAN_GRPC_PORT: '0',
      CAPSTAN_AUTH_SERVICE_TOKENS: `appset=${token}`,
      CAPSTAN_CREDENTIALS_ENCRYPTION_KEYS: JSON.stringify({
        active: 'k1',
        keys: { k1: randomBytes(32).toString('base64') },
      }),
      CAPSTAN_CACHE_DIR: cache,
      CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY: pki.delegation.publicKeyPem,
      CAPSTAN_REVISION_CACHE_TTL_MS: '0',
    });
    h = await startHarness(
      {
        CAPSTAN_REPO_ADDRESS: repo.address,
        CAPSTAN_REPO_SERVICE_TOKEN: token,
        CAPSTAN_RECONCILE_TICK_MS: '200',
      },
      { bus: repoBus },
    );
    const issuer = new DelegationIssuer(delegationPrivateKey(pki.delegation.privateKeyPem));
    caller = {
      api: 'caller-api',
      repo: await issuer.mint({ user: 'alice', holder: 'appset', audience: 'repo', ttlSeconds: 600 }),
    };
  }, 240_000);

  afterAll(async () => {
    await h?.stop();
    repo?.child.kill('SIGTERM');
    await repoBus?.cleanup();
    await git?.close();
    await repoDb?.drop();
    if (cache) await rm(cache, { recursive: true, force: true });
  });

  const manifest = () =>
    JSON.stringify({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'ApplicationSet',
      metadata: { name: 'git-apps' },
      spec: {
        generators: [{ git: { repoURL: apps.url, revision: 'HEAD', directories: [{ path: 'apps/*' }] } }],
        template: {
          metadata: { name: '{{path.basename}}' },
          spec: {
            project: 'team-a',
            source: { repoURL: apps.url, targetRevision: 'HEAD', path: '{{path}}' },
            destination: { server: 'https://kubernetes.default.svc', namespace: 'team-a-{{path.basename}}' },
          },
        },
      },
    });

  it('generates one Application per directory, reading the repository as the caller', async () => {
    const res = (await h.call((c) => c.upsert, {
      manifestJson: manifest(),
      upsert: false,
      dryRun: false,
      delegations: caller,
    })) as appsetv1.ApplicationSetResult;
    expect(res.applications.map((a) => `${a.name}:${a.action}`)).toEqual(['a:create', 'b:create']);
    const db = new pg.Client({ connectionString: repoDb.url });
    await db.connect();
    const actors = await db.query(`select distinct actor from audit.credential_decisions order by 1`);
    await db.end();
    expect(actors.rows.map((r: { actor: string }) => r.actor)).toEqual(['user:alice via service:appset']);
  });

  it('regenerates after a push, as the set owner', async () => {
    await apps.commit({ 'apps/c/cm.yaml': 'kind: ConfigMap\n' });
    const nc = await h.tbus.connect('ext-git');
    const push = newEvent(
      gitPush.type,
      { repoURL: apps.url },
      { source: 'ci/test', subject: apps.url, actor: 'system:ci' },
    );
    await nc
      .jetstream()
      .publish(`${h.tbus.namespace}.ext.git.push`, JSON.stringify(push), { msgID: push.id });
    await nc.close();
    await expect
      .poll(() => [...(h.api.owned.get('argocd/git-apps')?.keys() ?? [])].sort(), {
        timeout: 30_000,
        interval: 200,
      })
      .toEqual(['a', 'b', 'c']);
  });
});
