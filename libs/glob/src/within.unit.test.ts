import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileGlob } from './glob.js';
import { globLiteral, globWithin } from './within.js';

describe('globWithin (conservative glob containment)', () => {
  it.each([
    ['team-a', 'team-a', true],
    ['team-a', 'team-*', true],
    ['team-a-*', 'team-*', true],
    ['team-?', 'team-*', true],
    ['team-[ab]', 'team-*', true],
    ['team-{a,b}', 'team-*', true],
    ['team-{a,b}', '{team-a,team-b}', true],
    ['*', 'team-*', false],
    ['prod', 'team-*', false],
    ['team-*', 'team-a-*', false],
    // a `?` of the parent cannot absorb a star of the child
    ['a*c', 'a?c', false],
    ['a*c', 'a[*x]c', false],
    // literal text of the parent never meets a wildcard of the child
    ['[ab]', '*a*', false],
    ['a\\*', 'a*', true],
    ['a*', 'a\\*', false],
    ['*-dev', '*', true],
  ])('%s within %s (no separators): %s', (child, parent, want) => {
    expect(globWithin(child, parent)).toBe(want);
  });

  it.each([
    ['https://git/org/*', 'https://git/org/*', true],
    ['https://git/org/app-*', 'https://git/org/*', true],
    ['https://git/org/sub/*', 'https://git/org/*', false],
    ['https://git/org/**', 'https://git/org/*', false],
    ['https://git/org/**', 'https://git/org/**', true],
    ['https://git/org/a/*', 'https://git/org/**', true],
    ['https://git/org/[!x]', 'https://git/org/*', false],
    ['https://git/org/[a/]', 'https://git/org/*', false],
  ])('%s within %s (separator /): %s', (child, parent, want) => {
    expect(globWithin(child, parent, { separators: '/' })).toBe(want);
  });

  it('never says within when some text the child matches is not matched by the parent', () => {
    const alphabet = fc.constantFrom('a', 'b', '-', '/', '*', '?', '**', '[ab]', '{a,b}');
    const pattern = fc.array(alphabet, { maxLength: 5 }).map((parts) => parts.join(''));
    const text = fc.array(fc.constantFrom('a', 'b', 'c', '-', '/'), { maxLength: 7 }).map((t) => t.join(''));
    for (const separators of ['', '/']) {
      fc.assert(
        fc.property(pattern, pattern, text, (child, parent, t) => {
          const c = compileGlob(child, { separators });
          const p = compileGlob(parent, { separators });
          if (globWithin(child, parent, { separators }) && c.match(t)) expect(p.match(t)).toBe(true);
        }),
        { numRuns: 3000 },
      );
    }
  });
});

describe('globLiteral', () => {
  it('gives the text of a pattern without wildcards, and undefined otherwise', () => {
    expect(globLiteral('team-a')).toBe('team-a');
    expect(globLiteral('')).toBe('');
    expect(globLiteral('a\\*b')).toBe('a*b');
    expect(globLiteral('a*')).toBeUndefined();
    expect(globLiteral('{a,b}')).toBeUndefined();
  });
});
