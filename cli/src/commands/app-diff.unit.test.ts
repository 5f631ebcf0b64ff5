import { describe, expect, it } from 'vitest';
import { apiv1 } from '@capstan/proto';
import { renderResourceDiffs } from './app-diff.js';

const cm = (value: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: 'n' },
    data: { k: value },
  });
const item = (over: Partial<apiv1.ResourceDiff>) =>
  apiv1.ResourceDiff.fromPartial({ kind: 'ConfigMap', namespace: 'n', name: 'c', ...over });

describe('renderResourceDiffs', () => {
  it('renders modified resources, live against predicted live, as argocd app diff', () => {
    const r = renderResourceDiffs(
      [
        item({
          modified: true,
          normalizedLiveState: cm('old'),
          predictedLiveState: cm('new'),
          liveState: cm('x'),
          targetState: cm('y'),
        }),
      ],
      false,
    );
    expect(r.found).toBe(true);
    expect(r.text).toContain('===== /ConfigMap n/c ======');
    expect(r.text).toContain('-  k: old\n+  k: new');
  });
  it('skips unmodified resources and hooks; a missing live object shows git’s whole object', () => {
    expect(
      renderResourceDiffs(
        [
          item({ modified: false, liveState: cm('a'), targetState: cm('b') }),
          item({ hook: true, modified: true, targetState: cm('h') }),
        ],
        false,
      ).found,
    ).toBe(false);
    const missing = renderResourceDiffs([item({ modified: true, targetState: cm('new') })], false);
    expect(missing.text).toContain('+  k: new');
  });
  it('collects unreadable resources as errors', () => {
    const r = renderResourceDiffs(
      [item({ error: 'system:serviceaccount:a:d may not read it: forbidden' })],
      false,
    );
    expect(r.errors).toEqual(['/ConfigMap n/c: system:serviceaccount:a:d may not read it: forbidden']);
  });
});
