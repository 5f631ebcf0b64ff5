import { describe, expect, it } from 'vitest';
import { cloneBranchHint, isAcceptableRevision, revisionCandidates } from './revision.js';

describe('revisions', () => {
  it('looks up branches before tags, HEAD as the default branch and SHAs as commits', () => {
    expect(revisionCandidates('main')).toEqual(['refs/remotes/origin/main', 'refs/tags/main']);
    expect(revisionCandidates('HEAD')).toEqual(['refs/capstan/HEAD', 'refs/remotes/origin/HEAD']);
    expect(revisionCandidates('')).toEqual(['refs/capstan/HEAD', 'refs/remotes/origin/HEAD']);
    expect(revisionCandidates('refs/heads/x')).toEqual(['refs/remotes/origin/x']);
    expect(revisionCandidates('A'.repeat(40))).toEqual(['a'.repeat(40)]);
    expect(revisionCandidates('abc1234')).toEqual([
      'refs/remotes/origin/abc1234',
      'refs/tags/abc1234',
      'abc1234',
    ]);
    expect(revisionCandidates('refs/pull/1/head')).toEqual(['refs/pull/1/head']);
  });

  it('lets a cold clone check out named branches and tags directly', () => {
    expect(cloneBranchHint('release/1.2')).toBe('release/1.2');
    expect(cloneBranchHint('HEAD')).toBeNull();
    expect(cloneBranchHint('abc1234')).toBeNull();
    expect(cloneBranchHint('refs/tags/v1')).toBeNull();
  });

  it('refuses revisions git could read as options or expressions', () => {
    for (const bad of ['--upload-pack=x', 'main..evil', 'HEAD~1', 'main^', 'a b', 'x:y', 'main@{1}']) {
      expect(isAcceptableRevision(bad)).toBe(false);
    }
    for (const good of ['main', 'release/1.2', 'v1.0.0', 'HEAD', ''])
      expect(isAcceptableRevision(good)).toBe(true);
  });
});
