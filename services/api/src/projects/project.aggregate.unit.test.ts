import { describe, expect, it } from 'vitest';
import type { AppProject } from '@capstan/policy';
import {
  decideProject,
  evolveProject,
  initialProjectState,
  privilegedChanges,
  PROJECT_CREATED,
  PROJECT_DELETED,
  PROJECT_UPDATED,
  type ProjectEvent,
  type ProjectState,
} from './project.aggregate.js';

const project = (spec: AppProject['spec'] = {} as unknown as AppProject['spec']): AppProject =>
  ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'AppProject',
    metadata: { name: 'team-a', namespace: 'argocd' },
    spec,
  }) as AppProject;

const dsa = [{ server: '*', namespace: 'team-a-*', defaultServiceAccount: 'deployer' }];

function fold(events: ProjectEvent[]): ProjectState {
  return events.reduce(evolveProject, initialProjectState());
}

describe('project aggregate', () => {
  it('creates, then refuses a different create without upsert, and ignores an identical one', () => {
    const created = decideProject(
      { type: 'create', project: project(), upsert: false, isAdmin: true, uid: 'u1' },
      initialProjectState(),
      0,
    );
    expect(created.map((e) => e.type)).toEqual([PROJECT_CREATED]);
    const state = fold(created);
    expect(
      decideProject(
        { type: 'create', project: project(), upsert: false, isAdmin: true, uid: 'u2' },
        state,
        1,
      ),
    ).toEqual([]);
    const changed = project({ description: 'x' } as unknown as AppProject['spec']);
    expect(() =>
      decideProject({ type: 'create', project: changed, upsert: false, isAdmin: true, uid: 'u2' }, state, 1),
    ).toThrow(/already exists/);
    expect(
      decideProject(
        { type: 'create', project: changed, upsert: true, isAdmin: true, uid: 'u2' },
        state,
        1,
      )[0],
    ).toMatchObject({
      type: PROJECT_UPDATED,
      data: { changed: ['spec.description'] },
    });
  });

  it('lets only admins set or change destinationServiceAccounts and parentProject', () => {
    const withDsa = project({ destinationServiceAccounts: dsa } as unknown as AppProject['spec']);
    expect(() =>
      decideProject(
        { type: 'create', project: withDsa, upsert: false, isAdmin: false, uid: 'u' },
        initialProjectState(),
        0,
      ),
    ).toThrow(/only admins may change spec.destinationServiceAccounts/);
    const state = fold(
      decideProject(
        { type: 'create', project: withDsa, upsert: false, isAdmin: true, uid: 'u' },
        initialProjectState(),
        0,
      ),
    );
    const reparented = project({
      destinationServiceAccounts: dsa,
      parentProject: 'tenants',
    } as unknown as AppProject['spec']);
    expect(() =>
      decideProject({ type: 'update', project: reparented, expectedVersion: 1, isAdmin: false }, state, 1),
    ).toThrow(/spec.parentProject/);
    const described = project({
      destinationServiceAccounts: dsa,
      description: 'ok',
    } as unknown as AppProject['spec']);
    expect(
      decideProject({ type: 'update', project: described, expectedVersion: 1, isAdmin: false }, state, 1),
    ).toHaveLength(1);
  });

  it('treats an absent and an empty list as the same privileged value', () => {
    expect(
      privilegedChanges(
        project(),
        project({ destinationServiceAccounts: [] } as unknown as AppProject['spec']),
      ),
    ).toEqual([]);
    expect(
      privilegedChanges(
        project(),
        project({ destinationServiceAccounts: dsa } as unknown as AppProject['spec']),
      ),
    ).toEqual(['spec.destinationServiceAccounts']);
  });

  it('refuses an update at a stale version, and a delete of a missing project', () => {
    const state = fold(
      decideProject(
        { type: 'create', project: project(), upsert: false, isAdmin: true, uid: 'u' },
        initialProjectState(),
        0,
      ),
    );
    expect(() =>
      decideProject(
        {
          type: 'update',
          project: project({ description: 'y' } as unknown as AppProject['spec']),
          expectedVersion: 3,
          isAdmin: true,
        },
        state,
        1,
      ),
    ).toThrow(/resourceVersion 1, not 3/);
    expect(() =>
      decideProject(
        { type: 'delete', name: 'nope', namespace: 'argocd', expectedVersion: 0 },
        initialProjectState(),
        0,
      ),
    ).toThrow(/not found/);
    const deleted = decideProject(
      { type: 'delete', name: 'team-a', namespace: 'argocd', expectedVersion: 0 },
      state,
      1,
    );
    expect(deleted[0]?.type).toBe(PROJECT_DELETED);
    expect(evolveProject(state, deleted[0]!)).toEqual(initialProjectState());
  });
});
