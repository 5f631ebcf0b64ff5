import { describe, expect, it } from 'vitest';
import { decideWatch, evolveWatch, initialWatchState, watchStreamId } from './revision-watch.js';

const key = { repoURL: 'https://git.example.com/a.git', revision: 'main', project: 'team-a' };
const sha1 = 'a'.repeat(40);
const sha2 = 'b'.repeat(40);

describe('revision watch', () => {
  it('announces the first resolution and every move, and nothing when the commit stays', () => {
    const first = decideWatch(
      initialWatchState(),
      { key, sha: sha1, detectedBy: 'poll' },
      { actor: 'service:repo' },
    );
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({
      type: 'io.capstan.repository.revision-changed.v1',
      subject: watchStreamId(key),
      actor: 'service:repo',
      data: { ...key, sha: sha1, previousSha: null, detectedBy: 'poll' },
    });
    const state = evolveWatch(initialWatchState(), first[0]!);
    expect(decideWatch(state, { key, sha: sha1, detectedBy: 'poll' }, { actor: 'service:repo' })).toEqual([]);
    const moved = decideWatch(
      state,
      { key, sha: sha2, detectedBy: 'push' },
      { actor: 'system:ci', causationId: 'push-1', correlationId: 'c-1' },
    );
    expect(moved[0]).toMatchObject({
      causationid: 'push-1',
      correlationid: 'c-1',
      data: { sha: sha2, previousSha: sha1, detectedBy: 'push' },
    });
  });

  it('gives one stream per URL (as Argo CD compares them), revision and project', () => {
    expect(watchStreamId({ ...key, repoURL: 'HTTPS://git.example.com/a' })).toBe(watchStreamId(key));
    expect(watchStreamId({ ...key, project: 'team-b' })).not.toBe(watchStreamId(key));
    expect(watchStreamId({ ...key, revision: 'v1' })).not.toBe(watchStreamId(key));
  });
});
