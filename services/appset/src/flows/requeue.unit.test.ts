import { describe, expect, it } from 'vitest';
import { validateManifest } from '../sets/manifest.js';
import { requeueSecondsOf } from './appset-flows.js';

const set = (generators: unknown[]) =>
  validateManifest({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name: 's' },
    spec: { generators, template: { metadata: { name: 'x' }, spec: {} } },
  });

const git = (requeueAfterSeconds?: number) => ({
  git: { repoURL: 'https://git.example.com/a.git', directories: [{ path: '*' }], requeueAfterSeconds },
});

describe('requeue interval', () => {
  it("is the default (Argo CD's 180 s) without a git generator that sets one", () => {
    expect(requeueSecondsOf(set([{ list: { elements: [] } }]), 180)).toBe(180);
    expect(requeueSecondsOf(set([git()]), 180)).toBe(180);
  });

  it('is the smallest requeueAfterSeconds of the git generators, nested ones included', () => {
    expect(
      requeueSecondsOf(
        set([git(600), { matrix: { generators: [git(30), { list: { elements: [] } }] } }]),
        180,
      ),
    ).toBe(30);
  });
});
