import { describe, expect, it } from 'vitest';
import { IN_CLUSTER_URL, application, lookupOf, project } from '../test-support/fixtures.js';
import { explainSync } from '../sync/explain.js';
import { validateAppProject } from './validate.js';

const manifest = (spec: Record<string, unknown>) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'AppProject',
  metadata: { name: 'p' },
  spec,
});

describe('AppProject fields Capstan does not implement are refused, never ignored', () => {
  it('refuses signatureKeys and orphanedResources with "not supported"', () => {
    const r = validateAppProject(
      manifest({ signatureKeys: [{ keyID: 'ABC' }], orphanedResources: { warn: true } }),
    );
    expect(!r.ok && r.issues.map((i) => [i.path, i.message.split(':')[0]])).toEqual([
      ['spec.signatureKeys', 'not supported'],
      ['spec.orphanedResources', 'not supported yet'],
    ]);
    expect(validateAppProject(manifest({ signatureKeys: [] })).ok).toBe(true);
  });

  it('refuses an unknown field of a sync window', () => {
    const r = validateAppProject(
      manifest({
        syncWindows: [
          { kind: 'deny', schedule: '* * * * *', duration: '1h', applications: ['*'], tz: 'UTC' },
        ],
      }),
    );
    expect(r.ok).toBe(false);
  });
});

describe('permitOnlyProjectScopedClusters', () => {
  const only = project('team-a', {
    sourceRepos: ['*'],
    destinations: [{ server: '*', namespace: '*' }],
    permitOnlyProjectScopedClusters: true,
  });
  const run = (destination: Record<string, unknown>) =>
    explainSync({
      application: application('guestbook', { project: 'team-a', destination }),
      projects: lookupOf(only),
      clusters: [
        { name: 'shared', server: 'https://shared.example.com' },
        { name: 'mine', server: 'https://mine.example.com', project: 'team-a' },
        { name: 'theirs', server: 'https://theirs.example.com', project: 'team-b' },
      ],
      impersonation: false,
      strict: false,
    });

  it("permits only the project's own clusters, by server or by name", () => {
    expect(run({ server: 'https://mine.example.com', namespace: 'x' }).allowed).toBe(true);
    expect(run({ name: 'mine', namespace: 'x' }).allowed).toBe(true);
    expect(run({ name: 'theirs', namespace: 'x' }).reason).toBe(
      'destination server "https://theirs.example.com" (cluster "theirs"), namespace "x" is not permitted by project "team-a": permitOnlyProjectScopedClusters is set and the cluster is scoped to project "team-b"',
    );
    expect(run({ server: 'https://shared.example.com', namespace: 'x' }).reason).toContain(
      'the cluster is not project-scoped',
    );
    expect(run({ server: IN_CLUSTER_URL, namespace: 'x' }).allowed).toBe(false);
  });
});

describe('destinations by cluster name', () => {
  it('a project that lists a cluster by name permits an Application that names it by server, and the reverse', () => {
    const p = project('team-a', { sourceRepos: ['*'], destinations: [{ name: 'prod', namespace: 'web' }] });
    const q = project('team-b', {
      sourceRepos: ['*'],
      destinations: [{ server: 'https://prod.example.com', namespace: 'web' }],
    });
    const clusters = [{ name: 'prod', server: 'https://prod.example.com' }];
    const run = (proj: string, destination: Record<string, unknown>) =>
      explainSync({
        application: application('guestbook', { project: proj, destination }),
        projects: lookupOf(p, q),
        clusters,
        impersonation: false,
        strict: false,
      }).allowed;
    expect(run('team-a', { server: 'https://prod.example.com', namespace: 'web' })).toBe(true);
    expect(run('team-a', { name: 'prod', namespace: 'web' })).toBe(true);
    expect(run('team-b', { name: 'prod', namespace: 'web' })).toBe(true);
    expect(run('team-a', { name: 'prod', namespace: 'db' })).toBe(false);
  });
});
