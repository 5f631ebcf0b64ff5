import { describe, expect, it } from 'vitest';
import { apiv1 } from '@capstan/proto';
import { keepUnrepresentable } from './unrepresentable.js';

describe('keepUnrepresentable', () => {
  it('keeps the fields a message cannot carry and lets the update win on every other', () => {
    const stored = {
      metadata: { name: 'team-a', namespace: 'argocd' },
      spec: {
        description: 'old',
        // representable since issue 12: an update that lists no windows removes them
        syncWindows: [{ kind: 'allow', schedule: '* * * * *', duration: '1h', applications: ['*'] }],
        // a resource name (Argo CD 3) is not in the message's GroupKind
        clusterResourceWhitelist: [{ group: '', kind: 'Namespace', name: 'team-a-*' }],
        destinations: [{ server: 'https://a', namespace: 'x' }],
      },
    };
    const incoming = {
      metadata: { name: 'team-a' },
      spec: {
        description: 'new',
        clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
        destinations: [{ server: 'https://a', namespace: 'y' }],
      },
    };
    expect(keepUnrepresentable(apiv1.Project, stored, incoming)).toEqual({
      metadata: { name: 'team-a' },
      spec: {
        description: 'new',
        clusterResourceWhitelist: [{ group: '', kind: 'Namespace', name: 'team-a-*' }],
        destinations: [{ server: 'https://a', namespace: 'y' }],
      },
    });
  });

  it('keeps unrepresentable parts of list items when the list keeps its length', () => {
    const stored = {
      spec: {
        project: 'p',
        source: { repoURL: 'r', plugin: { name: 'cmp' } },
        // not in the message (ignoreDifferences is, since issue 13: an update without it removes it)
        info: [{ name: 'owner', value: 'team-a' }],
        ignoreDifferences: [{ kind: 'X' }],
      },
    };
    const incoming = { spec: { project: 'p', source: { repoURL: 'r2' } } };
    expect(keepUnrepresentable(apiv1.Application, stored, incoming)).toEqual({
      spec: {
        project: 'p',
        source: { repoURL: 'r2', plugin: { name: 'cmp' } },
        info: [{ name: 'owner', value: 'team-a' }],
      },
    });
  });
});
