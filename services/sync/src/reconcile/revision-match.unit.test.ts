import { describe, expect, it } from 'vitest';
import { ApplicationSchema } from '@capstan/policy';
import { readsRevision } from './revision-match.js';

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

describe('which Applications a new revision concerns', () => {
  it('given Applications on several repositories and revisions, when a revision changes, then those reading that repository and revision are concerned, automated or not', () => {
    const apps = [
      app('auto', { ...src('https://GIT.example.com/team-a/apps', 'main'), syncPolicy: { automated: {} } }),
      app('manual', { ...src('https://git.example.com/team-a/apps.git', 'main') }),
      app('other-branch', { ...src('https://git.example.com/team-a/apps.git', 'dev') }),
      app('other-repo', { ...src('https://git.example.com/team-b/apps.git', 'main') }),
      app('multi', {
        sources: [
          { repoURL: 'https://x/values.git', ref: 'v' },
          { repoURL: 'https://git.example.com/team-a/apps.git', targetRevision: 'main', path: 'p' },
        ],
      }),
    ];
    expect(apps.filter((a) => readsRevision(a, change)).map((a) => a.metadata.name)).toEqual([
      'auto',
      'manual',
      'multi',
    ]);
  });

  it("given a revision resolved with another project's credential, when it changes, then this project's Applications are not concerned", () => {
    const a = app('auto', { ...src(change.repoURL, 'main') });
    expect(readsRevision(a, { ...change, project: 'team-b' })).toBe(false);
    expect(readsRevision(a, { ...change, project: '' })).toBe(true);
  });

  it('given HEAD and an empty targetRevision, when HEAD changes, then both are the same revision', () => {
    expect(readsRevision(app('auto', { ...src(change.repoURL) }), { ...change, revision: 'HEAD' })).toBe(
      true,
    );
  });
});
