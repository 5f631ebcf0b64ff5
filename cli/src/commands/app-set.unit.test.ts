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

  it('sets every automated flag and keeps existing automation settings', () => {
    const base = app({ automated: { prune: true } });
    const out = applySetFlags(base, flags({ selfHeal: true, allowEmpty: true }));
    expect(specOf(out).syncPolicy).toEqual({ automated: { prune: true, selfHeal: true, allowEmpty: true } });
    const off = applySetFlags(out, flags({ syncPolicy: 'auto', autoPrune: false }));
    expect(specOf(off).syncPolicy).toEqual({ automated: { selfHeal: true, allowEmpty: true } });
  });

  it('changes the retry backoff field by field, keeping the limit', () => {
    const first = applySetFlags(app(), flags({ syncRetryLimit: 2 }));
    const out = applySetFlags(first, flags({ syncRetryBackoffFactor: 3, syncRetryBackoffMaxDuration: '2m' }));
    expect(specOf(out).syncPolicy).toEqual({
      retry: { limit: 2, backoff: { factor: 3, maxDuration: '2m' } },
    });
  });

  it('changes project, repository and destination by server or name', () => {
    const out = applySetFlags(
      app(),
      flags({ project: 'team-b', repo: 'https://git.example.com/b.git', destServer: '', destName: 'prod' }),
    );
    expect(specOf(out)).toMatchObject({
      project: 'team-b',
      source: { repoURL: 'https://git.example.com/b.git' },
      destination: { name: 'prod', namespace: 'a' },
    });
  });

  it('adds sync options to an Application without a sync policy', () => {
    const out = applySetFlags(app(), flags({ syncOption: ['CreateNamespace=true'] }));
    expect(specOf(out).syncPolicy).toEqual({ syncOptions: ['CreateNamespace=true'] });
  });
});
