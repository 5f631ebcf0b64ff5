// SyncService.ExplainSync's answer, from the sync service's read model on real PostgreSQL and NATS
// (the api's events applied by the service itself): who the next sync would write as, the chain,
// the rules considered, and the link that denies. No cluster is reached: the decision needs none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '@capstan/service';
import { startSyncHarness, type SyncHarness } from '../test-support/harness.js';
import { application, project } from '../test-support/fixtures.js';
import { explainApplication } from './explanation.js';

const SERVER = 'https://k8s.example.test';
let h: SyncHarness;
const settings = { impersonation: true, strict: false, controlNamespace: 'argocd' };

beforeAll(async () => {
  h = await startSyncHarness([], { impersonation: true });
  await h.registerCluster({ server: SERVER }, 'prod');
  await h.putProject(
    project('platform', {
      destinations: [{ server: '*', namespace: 'team-*' }],
      destinationServiceAccounts: [{ server: '*', namespace: 'team-*', defaultServiceAccount: 'deployer' }],
    }),
  );
  await h.putProject(
    project('team-a', {
      parentProject: 'platform',
      destinations: [{ server: '*', namespace: '*' }],
      destinationServiceAccounts: [{ server: '*', namespace: 'team-a', defaultServiceAccount: 'deployer' }],
    }),
  );
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('ExplainSync: who the next sync will write as, and why', () => {
  it('names the ServiceAccount, the chain and every rule of it, before any sync', async () => {
    await h.putApplication(application('web', 'team-a', { server: SERVER, namespace: 'team-a' }));
    const e = await explainApplication({ db: h.db, settings }, { namespace: 'argocd', name: 'web' });
    expect(e).toMatchObject({
      allowed: true,
      identity: 'service-account',
      username: 'system:serviceaccount:team-a:deployer',
      projectChain: ['team-a', 'platform'],
      impersonation: true,
    });
    expect(e.rules.map((r) => [r.project, r.index, r.firstMatch])).toEqual([
      ['team-a', 0, true],
      ['platform', 0, true],
    ]);
    expect(e.evaluatedAt).not.toBe('');
  });

  it('refuses an Application aimed at kube-system, naming the parent whose restriction denies', async () => {
    await h.putApplication(application('addons', 'team-a', { server: SERVER, namespace: 'kube-system' }));
    const e = await explainApplication({ db: h.db, settings }, { namespace: 'argocd', name: 'addons' });
    expect(e.allowed).toBe(false);
    expect(e.username).toBe('');
    const denied = e.checks.filter((c) => !c.allowed);
    expect(denied[0]).toMatchObject({ check: 'destination', project: 'platform' });
    expect(e.reason).toContain('kube-system');
  });

  it('says NOT_FOUND for an Application it does not hold', async () => {
    await expect(
      explainApplication({ db: h.db, settings }, { namespace: 'argocd', name: 'nope' }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });
});
