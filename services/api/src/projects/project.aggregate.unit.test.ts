import { describe, expect, it } from 'vitest';
import type { AppProject } from '@capstan/policy';
import {
  decideProject,
  evolveProject,
  initialProjectState,
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
      {
        type: 'create',
        project: project(),
        upsert: false,
        isAdmin: true,
        checkedParent: undefined,
        uid: 'u1',
      },
      initialProjectState(),
      0,
    );
    expect(created.map((e) => e.type)).toEqual([PROJECT_CREATED]);
    const state = fold(created);
    expect(
      decideProject(
        {
          type: 'create',
          project: project(),
          upsert: false,
          isAdmin: true,
          checkedParent: undefined,
          uid: 'u2',
        },
        state,
        1,
      ),
    ).toEqual([]);
    const changed = project({ description: 'x' } as unknown as AppProject['spec']);
    expect(() =>
      decideProject(
        {
          type: 'create',
          project: changed,
          upsert: false,
          isAdmin: true,
          checkedParent: undefined,
          uid: 'u2',
        },
        state,
        1,
      ),
    ).toThrow(/already exists/);
    expect(
      decideProject(
        {
          type: 'create',
          project: changed,
          upsert: true,
          isAdmin: true,
          checkedParent: undefined,
          uid: 'u2',
        },
        state,
        1,
      )[0],
    ).toMatchObject({
      type: PROJECT_UPDATED,
      data: { changed: ['spec.description'] },
    });
  });

  it('lets a non-admin write only a project a parentProject bounds (self-service)', () => {
    const root = project({ destinationServiceAccounts: dsa } as unknown as AppProject['spec']);
    expect(() =>
      decideProject(
        { type: 'create', project: root, upsert: false, isAdmin: false, checkedParent: undefined, uid: 'u' },
        initialProjectState(),
        0,
      ),
    ).toThrow(/only admins may create project team-a without spec.parentProject/);
    const bounded = project({
      parentProject: 'tenants',
      destinationServiceAccounts: dsa,
    } as unknown as AppProject['spec']);
    const state = fold(
      decideProject(
        {
          type: 'create',
          project: bounded,
          upsert: false,
          isAdmin: false,
          checkedParent: undefined,
          uid: 'u',
        },
        initialProjectState(),
        0,
      ),
    );
    const described = project({
      parentProject: 'tenants',
      destinationServiceAccounts: dsa,
      description: 'ok',
    } as unknown as AppProject['spec']);
    const update = (p: AppProject, checkedParent: string | undefined) =>
      decideProject(
        { type: 'update', project: p, expectedVersion: 1, isAdmin: false, checkedParent },
        state,
        1,
      );
    expect(update(described, 'tenants')).toHaveLength(1);
    // removing the parent unbounds it: admins only
    expect(() => update(root, 'tenants')).toThrow(
      /only admins may remove spec.parentProject of project team-a/,
    );
    // rights checked against another parent than the stored one: refused, to be retried
    expect(() => update(described, 'other')).toThrow(
      /changed its parentProject while this write was checked/,
    );
  });

  it('lets a non-admin edit nothing of an unbounded project, and an admin everything', () => {
    const root = project({ description: 'a' } as unknown as AppProject['spec']);
    const state = fold(
      decideProject(
        { type: 'create', project: root, upsert: false, isAdmin: true, checkedParent: undefined, uid: 'u' },
        initialProjectState(),
        0,
      ),
    );
    const edited = project({ description: 'b' } as unknown as AppProject['spec']);
    const update = (isAdmin: boolean) =>
      decideProject(
        { type: 'update', project: edited, expectedVersion: 1, isAdmin, checkedParent: undefined },
        state,
        1,
      );
    expect(() => update(false)).toThrow(
      /only admins may change project team-a: it has no spec.parentProject/,
    );
    expect(update(true)).toHaveLength(1);
  });

  it('refuses an update at a stale version, and a delete of a missing project', () => {
    const state = fold(
      decideProject(
        {
          type: 'create',
          project: project(),
          upsert: false,
          isAdmin: true,
          checkedParent: undefined,
          uid: 'u',
        },
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
          checkedParent: undefined,
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
