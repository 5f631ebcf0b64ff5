import { describe, expect, it } from 'vitest';
import { compileIgnoreDifferences } from '@capstan/diff';
import { trackingContext } from '../apply/tracking.js';
import type { DesiredState } from './desired.js';
import { LiveIndex } from './live-index.js';
import { livePairs } from './pairs.js';
import { watchKeyText, type WatchKey } from './watch-key.js';

const watch: WatchKey = {
  server: 'https://k',
  username: 'system:serviceaccount:team-a:deployer',
  namespace: 'team-a',
  group: '',
  version: 'v1',
  resource: 'configmaps',
  kind: 'ConfigMap',
};
const informer = watchKeyText(watch);
const tracking = trackingContext({ namespace: 'argocd', name: 'web' }, 'argocd', 'team-a');
const live = (name: string, annotations: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    namespace: 'team-a',
    annotations: { 'argocd.argoproj.io/tracking-id': `web:/ConfigMap:team-a/${name}`, ...annotations },
  },
});

describe('the objects of a comparison', () => {
  it('given live objects tracked by the Application, when git declares only some, then the others require pruning, except hooks and copies of another object', async () => {
    const objects = new Map<string, unknown>([
      ['declared', live('declared')],
      ['stale', live('stale')],
      ['hook', live('hook', { 'argocd.argoproj.io/hook': 'PreSync' })],
      // A tracking id copied from another object does not make this one the Application's.
      [
        'copy',
        {
          ...live('copy'),
          metadata: { ...live('copy').metadata, annotations: live('stale').metadata.annotations },
        },
      ],
    ]);
    const index = new LiveIndex();
    for (const [, o] of objects) index.observe(informer, o as never, false);
    const desired = {
      tracking,
      resources: [
        {
          object: live('declared'),
          ref: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'declared' },
          watch,
        },
      ],
      ignore: await compileIgnoreDifferences([]),
    } as unknown as DesiredState;
    const pairs = livePairs(
      desired,
      { get: (_i, _ns, name) => objects.get(name) },
      index,
      new Set([informer]),
    );
    expect(pairs.map((p) => [p.name, p.desired !== undefined, p.live !== undefined])).toEqual([
      ['declared', true, true],
      ['stale', false, true],
    ]);
  });
});
