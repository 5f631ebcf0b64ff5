// The ApplicationSet aggregate, given/when/then over its events (emmett style): given the history,
// when a command is decided, then these events (or this refusal).
import { describe, expect, it } from 'vitest';
import { AlreadyExistsError, NotFoundError } from '@capstan/service';
import {
  APPSET_CREATED,
  APPSET_DELETED,
  APPSET_STATUS_CHANGED,
  APPSET_UPDATED,
  SPEC_DIFFERS,
  decideAppSet,
  evolveAppSet,
  initialAppSetState,
  type AppSetCommand,
  type AppSetEvent,
} from './appset.aggregate.js';
import { validateManifest, type StoredAppSet } from './manifest.js';
import { nextStatus } from './status.js';

const set = (
  elements: Record<string, string>[] = [{ cluster: 'a' }],
  labels?: Record<string, string>,
): StoredAppSet =>
  validateManifest({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name: 'guestbook', ...(labels ? { labels } : {}) },
    spec: {
      generators: [{ list: { elements } }],
      template: {
        metadata: { name: '{{cluster}}-guestbook' },
        spec: {
          project: 'team-a',
          source: { repoURL: 'https://git.example.com/a.git', path: 'g' },
          destination: { server: 'https://kubernetes.default.svc', namespace: 'a' },
        },
      },
    },
  }).stored;

function given(...history: AppSetEvent[]) {
  const state = history.reduce(evolveAppSet, initialAppSetState());
  return {
    when: (command: AppSetCommand) => ({
      then: (expected: unknown[]) => expect(decideAppSet(command, state)).toMatchObject(expected),
      thenThrows: (err: new (...args: never[]) => Error, message?: string | RegExp) => {
        expect(() => decideAppSet(command, state)).toThrow(err);
        if (message) expect(() => decideAppSet(command, state)).toThrow(message);
      },
    }),
  };
}

const created = (s = set()): AppSetEvent => ({
  type: APPSET_CREATED,
  data: { applicationSet: s, uid: 'u1' },
});
const upsert = (s: StoredAppSet, upsertFlag = false): AppSetCommand => ({
  type: 'upsert',
  applicationSet: s,
  upsert: upsertFlag,
  uid: 'u2',
});

describe('ApplicationSet aggregate', () => {
  it('creates a set that does not exist, with the given uid and the default namespace', () => {
    given()
      .when(upsert(set()))
      .then([
        { type: APPSET_CREATED, data: { uid: 'u2', applicationSet: { metadata: { namespace: 'argocd' } } } },
      ]);
  });

  it('writes nothing when the same set is created again (Argo CD is idempotent there)', () => {
    given(created()).when(upsert(set())).then([]);
  });

  it("refuses a different set without upsert, with Argo CD's message", () => {
    given(created())
      .when(upsert(set([{ cluster: 'b' }])))
      .thenThrows(AlreadyExistsError, SPEC_DIFFERS);
  });

  it('updates a different set with upsert, naming the fields that changed', () => {
    given(created())
      .when(upsert(set([{ cluster: 'b' }], { team: 'a' }), true))
      .then([{ type: APPSET_UPDATED, data: { changed: ['metadata.labels', 'spec.generators'] } }]);
  });

  it('deletes an existing set and refuses to delete a missing one', () => {
    const del: AppSetCommand = {
      type: 'delete',
      name: 'guestbook',
      namespace: 'argocd',
      preserveResources: true,
    };
    given(created())
      .when(del)
      .then([{ type: APPSET_DELETED, data: { preserveResources: true } }]);
    given()
      .when(del)
      .thenThrows(NotFoundError, /applicationset argocd\/guestbook not found/);
    given(created(), {
      type: APPSET_DELETED,
      data: { name: 'guestbook', namespace: 'argocd', preserveResources: false },
    })
      .when(del)
      .thenThrows(NotFoundError);
  });

  it('records a changed status, and nothing when it is unchanged or the set is gone', () => {
    const status = nextStatus(
      { conditions: [], resources: [], appliedDigest: '' },
      { kind: 'applied', applications: [], digest: 'd1' },
      new Date('2026-11-25T00:00:00Z'),
    );
    given(created())
      .when({ type: 'record-status', status })
      .then([{ type: APPSET_STATUS_CHANGED, data: status }]);
    given(created(), { type: APPSET_STATUS_CHANGED, data: status })
      .when({ type: 'record-status', status })
      .then([]);
    given().when({ type: 'record-status', status }).then([]);
  });

  it('keeps the status across a spec update and forgets everything on delete', () => {
    const status = nextStatus(
      { conditions: [], resources: [], appliedDigest: '' },
      { kind: 'applied', applications: [], digest: 'd1' },
      new Date(),
    );
    const updated: AppSetEvent = {
      type: APPSET_UPDATED,
      data: { applicationSet: set([{ cluster: 'c' }]), changed: [] },
    };
    const state = [created(), { type: APPSET_STATUS_CHANGED, data: status } as AppSetEvent, updated].reduce(
      evolveAppSet,
      initialAppSetState(),
    );
    expect(state.status.appliedDigest).toBe('d1');
    expect(state.uid).toBe('u1');
    const gone = evolveAppSet(state, {
      type: APPSET_DELETED,
      data: { name: 'guestbook', namespace: 'argocd', preserveResources: false },
    });
    expect(gone).toEqual(initialAppSetState());
  });
});
