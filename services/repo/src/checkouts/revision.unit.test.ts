import { describe, expect, it } from 'vitest';
import { isAcceptableRevision, revisionCandidates } from './revision.js';

describe('revisions', () => {
  it('looks up branches before tags, HEAD as the default branch and SHAs as commits', () => {
    expect(revisionCandidates('main')).toEqual(['refs/heads/main', 'refs/tags/main']);
    expect(revisionCandidates('HEAD')).toEqual(['refs/capstan/HEAD']);
    expect(revisionCandidates('')).toEqual(['refs/capstan/HEAD']);
    expect(revisionCandidates('A'.repeat(40))).toEqual(['a'.repeat(40)]);
    expect(revisionCandidates('abc1234')).toEqual(['refs/heads/abc1234', 'refs/tags/abc1234', 'abc1234']);
    expect(revisionCandidates('refs/pull/1/head')).toEqual(['refs/pull/1/head']);
  });

  it('refuses revisions git could read as options or expressions', () => {
    for (const bad of ['--upload-pack=x', 'main..evil', 'HEAD~1', 'main^', 'a b', 'x:y', 'main@{1}']) {
      expect(isAcceptableRevision(bad)).toBe(false);
    }
    for (const good of ['main', 'release/1.2', 'v1.0.0', 'HEAD', ''])
      expect(isAcceptableRevision(good)).toBe(true);
  });
});
