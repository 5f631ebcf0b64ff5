import { describe, expect, it } from 'vitest';
import { draftOf, projectOf } from './project-form';
import type { Project } from './chain';

describe('project form', () => {
  it('turns the lines into the spec in Argo CD spellings', () => {
    const d = {
      ...draftOf(),
      name: ' team-c ',
      sourceRepos: 'https://git.example.com/team-c/*\n',
      destinations: 'https://kubernetes.default.svc,team-c-*\nin-cluster, team-c',
      serviceAccounts: 'https://kubernetes.default.svc,team-c,deployer',
      clusterResources: ',Namespace',
    };
    expect(projectOf(d)).toEqual({
      metadata: { name: 'team-c' },
      spec: {
        sourceRepos: ['https://git.example.com/team-c/*'],
        destinations: [
          { server: 'https://kubernetes.default.svc', namespace: 'team-c-*' },
          { name: 'in-cluster', namespace: 'team-c' },
        ],
        destinationServiceAccounts: [
          {
            server: 'https://kubernetes.default.svc',
            namespace: 'team-c',
            defaultServiceAccount: 'deployer',
          },
        ],
        clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
      },
    });
  });

  it('edits a stored project: the fields the form does not show stay, the version is sent', () => {
    const stored: Project & { spec: Record<string, unknown> } = {
      metadata: { name: 'team-a', resourceVersion: '7' },
      spec: {
        description: 'old',
        parentProject: 'platform',
        sourceRepos: ['a'],
        roles: [{ name: 'dev', policies: [] }],
        destinations: [{ server: 'https://k', namespace: 'x' }],
      },
    };
    const d = draftOf(stored);
    expect(d.destinations).toBe('https://k,x');
    const out = projectOf({ ...d, description: '', parentProject: ' root ' }, stored);
    expect(out.metadata).toEqual({ name: 'team-a', resourceVersion: '7' });
    expect(out.spec).toMatchObject({ parentProject: 'root', roles: [{ name: 'dev', policies: [] }] });
    expect(out.spec).not.toHaveProperty('description');
    expect(out.spec).not.toHaveProperty('clusterResourceWhitelist');
  });
});
