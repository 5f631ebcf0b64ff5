// Argo CD's webhook matching (util/webhook/webhook_test.go's cases for GetWebURLRegex,
// sourceRevisionHasChanged and ParseRevision), on Capstan's port.
import { describe, expect, it } from 'vitest';
import { affectedSources, parseRevision, revisionMatches, sourcesOf, webUrlRegex } from './matching.js';

describe('webhook matching', () => {
  it('parses revisions as Argo CD does', () => {
    expect(parseRevision('refs/heads/master')).toBe('master');
    expect(parseRevision('refs/heads/feature/x')).toBe('feature/x');
    expect(parseRevision('refs/tags/v1.2.0')).toBe('v1.2.0');
    expect(parseRevision('master')).toBe('master');
    expect(parseRevision('')).toBe('');
  });

  it.each([
    ['https://example.com/org/repo', 'https://example.com/org/repo', true],
    ['https://example.com/org/repo', 'https://example.com/org/repo.git', true],
    ['https://example.com/org/repo', 'HTTPS://EXAMPLE.COM/ORG/REPO', true],
    ['https://example.com/org/repo', 'git@example.com:org/repo', true],
    ['https://example.com/org/repo', 'ssh://git@example.com/org/repo.git', true],
    ['https://example.com/org/repo', 'ssh://git@ssh.example.com:443/org/repo', true],
    ['https://example.com/org/repo', 'ssh://git@altssh.example.com/org/repo', true],
    ['https://example.com/org/repo', 'http://user.name@example.com:8080/org/repo', true],
    ['https://example.com/org/repo', 'https://example.com/org/repo2', false],
    ['https://example.com/org/repo', 'https://example.com/org/repo/sub', false],
    ['https://example.com/org/repo', 'https://otherexample.com/org/repo', false],
    ['https://example.com/org/repo', 'https://example.com.evil.io/org/repo', false],
    ['https://example.com/org/repo', 'https://example.com/org/repoxgit', false],
    ['https://example.com/o.r/repo', 'https://example.com/oxr/repo', false],
  ])('web URL %s matches %s: %s', (web, source, expected) => {
    expect(webUrlRegex(web)!.test(source)).toBe(expected);
  });

  it('gives no expression for a web URL that does not parse', () => {
    expect(webUrlRegex('not a url')).toBeUndefined();
    expect(webUrlRegex('')).toBeUndefined();
  });

  it('matches target revisions as sourceRevisionHasChanged', () => {
    expect(revisionMatches('HEAD', 'master', true)).toBe(true);
    expect(revisionMatches('HEAD', 'feature', false)).toBe(false);
    expect(revisionMatches('', 'master', true)).toBe(true);
    expect(revisionMatches('master', 'master', false)).toBe(true);
    expect(revisionMatches('refs/heads/master', 'master', false)).toBe(true);
    expect(revisionMatches('refs/tags/v1.0.0', 'v1.0.0', false)).toBe(true);
    expect(revisionMatches('refs/heads/main', 'master', true)).toBe(false);
    expect(revisionMatches('feature', 'master', true)).toBe(false);
    expect(revisionMatches('fix-x', 'v1.0.0', false)).toBe(false);
    // A semver constraint may be met by a pushed tag: refreshed (Capstan does not evaluate it here).
    expect(revisionMatches('1.*', 'v1.2.0', false)).toBe(true);
    expect(revisionMatches('>=1.0.0', '1.2.0', false)).toBe(true);
    expect(revisionMatches('1.2.x', '1.2.3', false)).toBe(true);
    expect(revisionMatches('>=1.0.0', 'master', false)).toBe(false);
  });

  it('reads spec.source and spec.sources, ignoring what is not a source', () => {
    expect(
      sourcesOf({
        spec: {
          source: { repoURL: 'https://a/r', targetRevision: 'main' },
          sources: [{ repoURL: 'https://b/r' }, { chart: 'x' }, null, 'junk'],
        },
      }),
    ).toEqual([
      { repoURL: 'https://a/r', targetRevision: 'main' },
      { repoURL: 'https://b/r', targetRevision: '' },
    ]);
    expect(sourcesOf(null)).toEqual([]);
    expect(sourcesOf({ spec: { sources: 'x' } })).toEqual([]);
  });

  it('gives the sources of an Application a push concerns', () => {
    const push = { webURLs: ['https://example.com/org/repo'], revision: 'main', touchedHead: true };
    const manifest = {
      spec: {
        sources: [
          { repoURL: 'git@example.com:org/repo.git', targetRevision: 'HEAD' },
          { repoURL: 'https://example.com/org/repo', targetRevision: 'dev' },
          { repoURL: 'https://example.com/org/other', targetRevision: 'main' },
        ],
      },
    };
    expect(affectedSources(push, manifest)).toEqual([
      { repoURL: 'git@example.com:org/repo.git', targetRevision: 'HEAD' },
    ]);
    expect(affectedSources({ ...push, webURLs: ['::'] }, manifest)).toEqual([]);
  });
});
