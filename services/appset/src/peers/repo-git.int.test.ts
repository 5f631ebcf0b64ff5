// Git generators through the real repo service (its built process, configured as in production:
// mutual TLS with the run's PKI, appset's token, the api's delegation key) reading a real git server:
// the set's Applications follow the repository's directories, the repo service records the reads as
// the delegated user, and a push regenerates the set without anyone calling the API.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gitPush, newEvent } from '@capstan/events';
import type { appsetv1 } from '@capstan/proto';
import { startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import {
  createTestBus,
  createTestDatabase,
  loggedPort,
  startServiceProcess,
  testPki,
  type ServiceProcess,
  type TestBus,
  type TestDatabase,
} from '@capstan/test/infra';
import { DelegationIssuer, delegationPrivateKey } from '@capstan/service-identity';
import { startHarness, type Harness } from '../test-support/harness.js';

describe('git generators through the repo service', () => {
  let git: GitServer;
  let apps: TestRepository;
  let repoDb: TestDatabase;
  let repoBus: TestBus;
  let repo: ServiceProcess;
  let repoAddress: string;
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
    repo = await startServiceProcess('repo', {
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
      // The test git server listens on this host, which the default egress policy denies.
      CAPSTAN_EGRESS_ALLOWED_NETWORKS: '127.0.0.1',
      CAPSTAN_AUTH_DELEGATION_PUBLIC_KEY: pki.delegation.publicKeyPem,
      CAPSTAN_REVISION_CACHE_TTL_MS: '0',
    });
    repoAddress = `127.0.0.1:${loggedPort(repo, 'grpcPort')}`;
    h = await startHarness(
      {
        CAPSTAN_REPO_ADDRESS: repoAddress,
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
    await repo?.stop();
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

  it('a reconcile skips regenerating while the revision stays, and sees a commit no event announced', async () => {
    const key = { namespace: 'argocd', name: 'git-apps' };
    const spy = vi.spyOn(h.handles.engine, 'generate');
    try {
      // Settled after the push: the revision it read is the one the repository is at.
      await expect
        .poll(() => h.handles.reconciler.reconcile(key), { timeout: 30_000, interval: 200 })
        .toBe('unchanged');
      spy.mockClear();
      expect(await h.handles.reconciler.reconcile(key)).toBe('unchanged');
      expect(spy).not.toHaveBeenCalled();
      // A commit without a push event (the requeue's case): resolving the revision sees it.
      await apps.commit({ 'apps/d/cm.yaml': 'kind: ConfigMap\n' });
      await h.handles.reconciler.reconcile(key);
      await expect
        .poll(() => [...(h.api.owned.get('argocd/git-apps')?.keys() ?? [])].sort(), {
          timeout: 30_000,
          interval: 200,
        })
        .toEqual(['a', 'b', 'c', 'd']);
      expect(spy).toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });
});
