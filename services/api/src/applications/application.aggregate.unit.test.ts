import { describe, expect, it } from 'vitest';
import type { Application } from '@capstan/policy';
import {
  APPLICATION_DELETED,
  decideApplication,
  evolveApplication,
  initialApplicationState,
} from './application.aggregate.js';
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
    const [deleted] = decideApplication(
      { type: 'delete', name: 'guestbook', namespace: 'argocd', cascade: true },
      state,
      1,
    );
    expect(deleted).toMatchObject({ type: APPLICATION_DELETED, data: { project: 'team-a', cascade: true } });
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
