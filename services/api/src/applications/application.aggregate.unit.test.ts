import { describe, expect, it } from 'vitest';
import type { Application } from '@capstan/policy';
import {
  APPLICATION_DELETED,
  APPLICATION_DELETION_REQUESTED,
  decideApplication,
  evolveApplication,
  initialApplicationState,
  type ApplicationCommand,
  type ApplicationState,
} from './application.aggregate.js';
import { parseDeleteOptions, type DeleteOptions } from './application-deletion.js';
import { validateApplication } from './application.validation.js';
import type { ValidationError } from '@capstan/service';

const app = (project = 'team-a'): Application =>
  validateApplication({
    metadata: { name: 'guestbook' },
    spec: {
      project,
      source: { repoURL: 'https://git.example.com/a.git', path: 'g' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'a' },
    },
  });

const del = (options: DeleteOptions): ApplicationCommand => ({
  type: 'delete',
  name: 'guestbook',
  namespace: 'argocd',
  options,
  operationId: 'op-1',
  at: new Date('2026-11-25T08:00:00Z'),
});

function created(metadata: Record<string, unknown> = {}): ApplicationState {
  const a = validateApplication({ ...app(), metadata: { ...app().metadata, ...metadata } });
  return decideApplication(
    { type: 'create', application: a, upsert: false, uid: 'u' },
    initialApplicationState(),
    0,
  ).reduce(evolveApplication, initialApplicationState());
}

describe('application aggregate', () => {
  it('normalises the manifest and records the project on delete', () => {
    const a = app();
    expect(a.metadata.namespace).toBe('argocd');
    const state = [
      decideApplication(
        { type: 'create', application: a, upsert: false, uid: 'u' },
        initialApplicationState(),
        0,
      )[0]!,
    ].reduce(evolveApplication, initialApplicationState());
    const [deleted] = decideApplication(del({ cascade: false, propagationPolicy: undefined }), state, 1);
    expect(deleted).toMatchObject({ type: APPLICATION_DELETED, data: { project: 'team-a', cascade: false } });
  });

  it('given cascade, when deleted, then the Application stays marked with the finalizer of the policy until finalized', () => {
    const background = decideApplication(
      del({ cascade: true, propagationPolicy: 'background' }),
      created(),
      1,
    );
    expect(background).toMatchObject([
      {
        type: APPLICATION_DELETION_REQUESTED,
        data: {
          propagationPolicy: 'background',
          operationId: 'op-1',
          application: {
            metadata: {
              finalizers: ['resources-finalizer.argocd.argoproj.io/background'],
              deletionTimestamp: '2026-11-25T08:00:00.000Z',
            },
          },
        },
      },
    ]);
    const deleting = background.reduce(evolveApplication, created());
    // Asking again changes nothing; writes and syncs wait; finalize removes it, once.
    expect(decideApplication(del({ cascade: true, propagationPolicy: undefined }), deleting, 2)).toEqual([]);
    expect(() =>
      decideApplication({ type: 'update', application: app(), expectedVersion: 0 }, deleting, 2),
    ).toThrow(/is being deleted/);
    const finalize: ApplicationCommand = { type: 'finalize', name: 'guestbook', namespace: 'argocd' };
    expect(decideApplication(finalize, deleting, 2)).toMatchObject([
      { type: APPLICATION_DELETED, data: { cascade: true } },
    ]);
    expect(decideApplication(finalize, created(), 1)).toEqual([]);
  });

  it('given the finalizer in the manifest, when deleted without a cascade flag, then it cascades; cascade=false orphans, also mid-deletion', () => {
    const withFinalizer = created({ finalizers: ['resources-finalizer.argocd.argoproj.io'] });
    const [requested] = decideApplication(
      del({ cascade: undefined, propagationPolicy: undefined }),
      withFinalizer,
      1,
    );
    expect(requested).toMatchObject({
      type: APPLICATION_DELETION_REQUESTED,
      data: { propagationPolicy: 'foreground' },
    });
    expect(
      decideApplication(del({ cascade: undefined, propagationPolicy: undefined }), created(), 1),
    ).toMatchObject([{ type: APPLICATION_DELETED, data: { cascade: false } }]);
    const deleting = evolveApplication(withFinalizer, requested!);
    expect(
      decideApplication(del({ cascade: false, propagationPolicy: undefined }), deleting, 2),
    ).toMatchObject([{ type: APPLICATION_DELETED, data: { cascade: false } }]);
  });

  it('reads propagation policies as Argo CD does, orphan meaning cascade=false', () => {
    expect(parseDeleteOptions(undefined, 'Background')).toEqual({
      cascade: undefined,
      propagationPolicy: 'background',
    });
    expect(parseDeleteOptions(undefined, 'orphan')).toEqual({ cascade: false, propagationPolicy: undefined });
    expect(() => parseDeleteOptions(true, 'sideways')).toThrow(/invalid propagation policy: sideways/);
    expect(() => parseDeleteOptions(false, 'foreground')).toThrow(/needs cascade/);
  });

  it('refuses a destination with both or neither of server and name', () => {
    try {
      validateApplication({
        metadata: { name: 'x' },
        spec: { project: 'p', source: { repoURL: 'r' }, destination: { namespace: 'a' } },
      });
      expect.unreachable();
    } catch (err) {
      expect((err as ValidationError).violations).toContainEqual({
        field: 'spec.destination',
        description: 'server or name is required',
      });
    }
  });
});
