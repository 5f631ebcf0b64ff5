import { describe, expect, it } from 'vitest';
import { repoPathProblem } from './repo-path.js';

describe('repoPathProblem', () => {
  it.each(['', '.', './', 'guestbook', 'apps/guestbook', 'a/../b', 'a/./b/', './a/b/..', 'a..b', '..a'])(
    'accepts %j',
    (path) => {
      expect(repoPathProblem(path)).toBeUndefined();
    },
  );

  it.each([
    ['..', /climbs above/],
    ['../../etc', /climbs above/],
    ['a/../../etc', /climbs above/],
    ['./../x', /climbs above/],
    ['/etc', /absolute/],
    ['  /etc', /absolute/],
    ['C:/Windows', /absolute/],
    ['a\\..\\..\\etc', /backslash/],
    ['\\\\host\\share', /backslash/],
    ['a\u0000b', /NUL/],
    ['a\nb', /control/],
  ])('refuses %j', (path, why) => {
    expect(repoPathProblem(path)).toMatch(why);
  });
});
