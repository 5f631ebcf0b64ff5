import { describe, expect, it } from 'vitest';
import { apiv1 } from '@capstan/proto';
import { applySetFlags, mergeSyncOptions, type AppSetFlags } from './app-set.js';

const app = (syncPolicy?: unknown) =>
  apiv1.Application.fromJSON({
    metadata: { name: 'web', namespace: 'argocd', resourceVersion: '7' },
    spec: {
      project: 'team-a',
      source: { repoURL: 'https://git.example.com/a.git', path: 'web', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'a' },
      ...(syncPolicy ? { syncPolicy } : {}),
    },
    status: { syncStatus: 'Synced' },
  });

const flags = (o: Partial<AppSetFlags>): AppSetFlags => ({ syncOption: [], ...o });
const specOf = (a: apiv1.Application) =>
  (apiv1.Application.toJSON(a) as { spec: Record<string, unknown> }).spec;

describe('capstan app set (argocd app set)', () => {
  it('turns on automation with self-heal, keeping everything it was not told to change', () => {
    const out = applySetFlags(app(), flags({ syncPolicy: 'automated', selfHeal: true }));
    expect(specOf(out).syncPolicy).toEqual({ automated: { selfHeal: true } });
    expect(specOf(out).source).toEqual({
      repoURL: 'https://git.example.com/a.git',
      path: 'web',
      targetRevision: 'main',
    });
    expect(out.metadata?.resourceVersion).toBe(7);
    expect(out.status).toBeUndefined();
  });

  it('turns automation off with --sync-policy none, keeping sync options', () => {
    const out = applySetFlags(
      app({ automated: { prune: true }, syncOptions: ['CreateNamespace=true'] }),
      flags({ syncPolicy: 'none' }),
    );
    expect(specOf(out).syncPolicy).toEqual({ syncOptions: ['CreateNamespace=true'] });
  });

  it('refuses --self-heal without automation, and an unknown policy', () => {
    expect(() => applySetFlags(app(), flags({ selfHeal: true }))).toThrow(/need --sync-policy automated/);
    expect(() => applySetFlags(app(), flags({ syncPolicy: 'sometimes' }))).toThrow(/--sync-policy: expected/);
  });

  it('replaces a sync option with the same key, as argocd does', () => {
    expect(
      mergeSyncOptions(['Prune=true', 'CreateNamespace=true'], ['Prune=false', 'PruneLast=true']),
    ).toEqual(['Prune=false', 'CreateNamespace=true', 'PruneLast=true']);
    expect(() => mergeSyncOptions([], ['Prune'])).toThrow(/expected Key=value/);
  });

  it('sets and removes the retry strategy', () => {
    const set = applySetFlags(app(), flags({ syncRetryLimit: 3, syncRetryBackoffDuration: '5s' }));
    expect(specOf(set).syncPolicy).toEqual({ retry: { limit: 3, backoff: { duration: '5s' } } });
    const removed = applySetFlags(set, flags({ syncRetryLimit: 0 }));
    expect(specOf(removed).syncPolicy).toBeUndefined();
  });

  it('retargets source and destination', () => {
    const out = applySetFlags(app(), flags({ revision: 'v2', destNamespace: 'b', path: 'web2' }));
    expect(specOf(out)).toMatchObject({
      source: { targetRevision: 'v2', path: 'web2' },
      destination: { namespace: 'b' },
    });
  });
});
