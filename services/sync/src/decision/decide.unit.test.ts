// The sync decision with the projects' sync windows: an automated sync (queued by the automated
// trigger) and a manual one are told apart, and a cascade deletion is not governed by windows.
import { describe, expect, it } from 'vitest';
import { decideSync, type SyncRequestData } from './decide.js';
import type { SyncInputs } from './sync-inputs.repository.js';
import type { ManifestSource } from '../manifests/manifest-source.js';

const SERVER = 'https://kubernetes.default.svc';
const application = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: { name: 'guestbook', namespace: 'argocd' },
  spec: {
    project: 'team-a',
    source: { repoURL: 'https://git.example.com/apps.git', path: 'guestbook' },
    destination: { server: SERVER, namespace: 'web' },
  },
};
const project = (manualSync: boolean) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'AppProject',
  metadata: { name: 'team-a', namespace: 'argocd' },
  spec: {
    sourceRepos: ['*'],
    destinations: [{ server: '*', namespace: '*' }],
    // always open
    syncWindows: [
      { kind: 'deny', schedule: '* * * * *', duration: '1h', applications: ['guest*'], manualSync },
    ],
  },
});
const inputs = (manualSync: boolean): SyncInputs => ({
  application,
  projects: [{ name: 'team-a', manifest: project(manualSync) }],
  clusters: [{ name: 'in-cluster', server: SERVER }],
  applied: new Map(),
});
/** The objects of the Application's source, as the repo service would render them. */
const rendered: ManifestSource = {
  render: async () => ({
    revision: 'abc',
    objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'site', namespace: 'web' } }],
  }),
};
const settings = { impersonation: false, strict: false, controlNamespace: 'argocd' };
const request = (extra: Partial<SyncRequestData> = {}): SyncRequestData => ({
  operationId: 'op-1',
  application: { namespace: 'argocd', name: 'guestbook' },
  dryRun: false,
  prune: false,
  ...extra,
});

async function decision(manualSync: boolean, req: SyncRequestData) {
  const d = await decideSync(inputs(manualSync), req, rendered, settings);
  if (!('decision' in d)) throw new Error(d.reason);
  return d.decision;
}

describe('sync decision: sync windows', () => {
  it('given an active deny window, when the automated trigger syncs, then it is refused naming the project and window', async () => {
    const d = await decision(true, request({ automated: true }));
    expect(d.allowed).toBe(false);
    expect(d.reason).toBe(
      'Sync operation blocked by sync window: project "team-a": deny window 0 ("* * * * *" for 1h) is active (automated sync)',
    );
  });

  it('given manualSync on the window, when a person syncs, then it passes; without manualSync it is refused', async () => {
    expect((await decision(true, request())).allowed).toBe(true);
    const refused = await decision(false, request());
    expect(refused.allowed).toBe(false);
    expect(refused.checks.find((c) => c.check === 'sync-window')).toMatchObject({
      allowed: false,
      project: 'team-a',
    });
  });

  it('given a cascade deletion, then windows do not apply', async () => {
    const d = await decision(false, request({ cascadeDelete: { application }, prune: true }));
    expect(d.checks.some((c) => c.check === 'sync-window')).toBe(false);
    expect(d.allowed).toBe(true);
  });
});
