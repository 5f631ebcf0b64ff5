import { describe, expect, it } from 'vitest';
import { LiveIndex, objectKey } from './live-index.js';

const obj = (name: string, tracking?: string) => ({
  metadata: {
    name,
    namespace: 'team-a',
    ...(tracking ? { annotations: { 'argocd.argoproj.io/tracking-id': tracking } } : {}),
  },
});

describe('which Applications a watch event concerns', () => {
  it('given an object tracked by an Application, when it changes, then that Application is concerned and the object is indexed under it', () => {
    const index = new LiveIndex();
    index.setApplication('argocd/guestbook', 'guestbook', []);
    expect([...index.observe('cm', obj('a', 'guestbook:/ConfigMap:team-a/a'), false)]).toEqual([
      'argocd/guestbook',
    ]);
    expect([...index.trackedBy('guestbook')]).toEqual([objectKey('cm', 'team-a', 'a')]);
  });

  it('given an object whose tracking id is removed or that is deleted, when it changes, then its former Application is still concerned and the index forgets it', () => {
    const index = new LiveIndex();
    index.setApplication('argocd/guestbook', 'guestbook', []);
    index.observe('cm', obj('a', 'guestbook:/ConfigMap:team-a/a'), false);
    expect([...index.observe('cm', obj('a'), false)]).toEqual(['argocd/guestbook']);
    expect(index.trackedBy('guestbook').size).toBe(0);
    index.observe('cm', obj('b', 'guestbook:/ConfigMap:team-a/b'), false);
    expect([...index.observe('cm', obj('b', 'guestbook:/ConfigMap:team-a/b'), true)]).toEqual([
      'argocd/guestbook',
    ]);
    expect(index.trackedBy('guestbook').size).toBe(0);
  });

  it('given an untracked object an Application declares, when it changes, then the declaring Application is concerned; an unrelated one is not', () => {
    const index = new LiveIndex();
    index.setApplication('argocd/web', 'web', [objectKey('cm', 'team-a', 'config')]);
    index.setApplication('argocd/other', 'other', []);
    expect([...index.observe('cm', obj('config'), false)]).toEqual(['argocd/web']);
    expect([...index.observe('cm', obj('unrelated'), false)]).toEqual([]);
  });

  it('given an informer that stopped, when dropped, then its objects leave the index', () => {
    const index = new LiveIndex();
    index.observe('cm', obj('a', 'guestbook:/ConfigMap:team-a/a'), false);
    index.observe('secrets', obj('s', 'guestbook:/Secret:team-a/s'), false);
    index.dropInformer('cm');
    expect([...index.trackedBy('guestbook')]).toEqual([objectKey('secrets', 'team-a', 's')]);
  });
});
