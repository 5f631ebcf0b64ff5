import { describe, expect, it } from 'vitest';
import { ApplicationSchema } from '@capstan/policy';
import { applicationsToSync, automatedOperationId } from './automated-sync.js';

const app = (name: string, spec: Record<string, unknown>) =>
  ApplicationSchema.parse({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name, namespace: 'argocd' },
    spec: { project: 'team-a', destination: { server: 'https://x', namespace: 'a' }, ...spec },
  });
const src = (repoURL: string, targetRevision?: string) => ({
  source: { repoURL, path: '.', ...(targetRevision ? { targetRevision } : {}) },
});
const change = {
  repoURL: 'https://git.example.com/team-a/apps.git',
  revision: 'main',
  project: 'team-a',
  sha: 'a'.repeat(40),
};

describe('which Applications a new revision syncs automatically', () => {
  it('given automated and manual Applications on several repositories, when a revision changes, then only the automated ones on that repository and revision sync', () => {
    const apps = [
      app('auto', {
        ...src('https://GIT.example.com/team-a/apps', 'main'),
        syncPolicy: { automated: { prune: true } },
      }),
      app('manual', { ...src('https://git.example.com/team-a/apps.git', 'main') }),
      app('other-branch', {
        ...src('https://git.example.com/team-a/apps.git', 'dev'),
        syncPolicy: { automated: {} },
      }),
      app('other-repo', {
        ...src('https://git.example.com/team-b/apps.git', 'main'),
        syncPolicy: { automated: {} },
      }),
      app('disabled', {
        ...src('https://git.example.com/team-a/apps.git', 'main'),
        syncPolicy: { automated: { enabled: false } },
      }),
      app('multi', {
        sources: [
          { repoURL: 'https://x/values.git', ref: 'v' },
          { repoURL: 'https://git.example.com/team-a/apps.git', targetRevision: 'main', path: 'p' },
        ],
        syncPolicy: { automated: {} },
      }),
    ];
    expect(applicationsToSync(apps, change).map((a) => a.metadata.name)).toEqual(['auto', 'multi']);
  });

  it("given a revision resolved with another project's credential, when it changes, then this project's Applications are not synced by it", () => {
    const apps = [app('auto', { ...src(change.repoURL, 'main'), syncPolicy: { automated: {} } })];
    expect(applicationsToSync(apps, { ...change, project: 'team-b' })).toEqual([]);
    expect(applicationsToSync(apps, { ...change, project: '' })).toHaveLength(1);
  });

  it('given an automated Application being deleted, when its revision changes, then it is not synced again', () => {
    const deleting = app('auto', { ...src(change.repoURL, 'main'), syncPolicy: { automated: {} } });
    (deleting.metadata as Record<string, unknown>).deletionTimestamp = '2026-11-25T08:00:00Z';
    expect(applicationsToSync([deleting], change)).toEqual([]);
  });

  it('given HEAD and an empty targetRevision, when HEAD changes, then both are the same revision', () => {
    const apps = [app('auto', { ...src(change.repoURL), syncPolicy: { automated: {} } })];
    expect(applicationsToSync(apps, { ...change, revision: 'HEAD' })).toHaveLength(1);
  });

  it('given the same event twice, when deriving operation ids, then they are equal (a redelivery queues nothing new)', () => {
    const a = app('auto', {});
    expect(automatedOperationId('e1', a)).toBe(automatedOperationId('e1', a));
    expect(automatedOperationId('e1', a)).not.toBe(automatedOperationId('e2', a));
  });
});
