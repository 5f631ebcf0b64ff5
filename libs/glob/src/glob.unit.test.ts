import { describe, expect, it } from 'vitest';
import { compileGlob, GLOB_LIMITS, globMatch, GlobSyntaxError, MAX_ALTERNATIVES } from './glob.js';

describe('Argo CD globs (gobwas semantics, no separators)', () => {
  const cases: Array<[pattern: string, text: string, expected: boolean]> = [
    // `*` matches any run, including '/', '.' and ':' (so '*' matches every server URL)
    ['*', 'https://kubernetes.default.svc', true],
    ['*', '', true],
    ['https://*', 'https://10.0.0.1:6443/path', true],
    ['*.svc', 'https://kubernetes.default.svc', true],
    ['*:6443', 'https://10.0.0.1:6443', true],
    ['https://*.example.com', 'https://a.b.example.com', true],
    ['guestbook-*', 'guestbook-dev', true],
    ['guestbook-*', 'guestbook-', true],
    ['guestbook-*', 'guestbook', false],
    ['guestbook-*', 'myns', false],
    ['team-*-prod', 'team-a-prod', true],
    ['team-*-prod', 'team-a-stage', false],
    ['a*b*c', 'a-x-b-y-c', true],
    ['a*b*c', 'a-x-c-y-b', false],
    // '**' is the same as '*' without separators
    ['**', 'a/b/c', true],
    // literal, case-sensitive, whole string
    ['guestbook', 'guestbook', true],
    ['guestbook', 'Guestbook', false],
    ['guestbook', 'guestbook-dev', false],
    ['guestbook', 'my-guestbook', false],
    // the empty pattern matches only the empty string
    ['', '', true],
    ['', 'default', false],
    // '?' is exactly one character
    ['ns-?', 'ns-a', true],
    ['ns-?', 'ns-', false],
    ['ns-?', 'ns-ab', false],
    ['ns-?', 'ns-/', true],
    // character classes
    ['ns-[abc]', 'ns-b', true],
    ['ns-[abc]', 'ns-d', false],
    ['ns-[!abc]', 'ns-d', true],
    ['ns-[!abc]', 'ns-a', false],
    ['ns-[a-c]', 'ns-b', true],
    ['ns-[a-c]', 'ns-z', false],
    ['ns-[!a-c]', 'ns-z', true],
    ['ns-[ab-]', 'ns--', true],
    ['[\\]]', ']', true],
    // alternatives
    ['{dev,prod}', 'prod', true],
    ['{dev,prod}', 'stage', false],
    ['team-{a,b}-{dev,prod}', 'team-b-dev', true],
    ['team-{a,b}-{dev,prod}', 'team-c-dev', false],
    ['{a,{b,c}x}', 'cx', true],
    ['{a,}z', 'z', true],
    ['{*.svc,10.*}', 'https://kubernetes.default.svc', true],
    // ',' and '}' are literal outside a group, ']' outside a class
    ['a,b', 'a,b', true],
    ['a}', 'a}', true],
    ['a]', 'a]', true],
    // escapes
    ['\\*', '*', true],
    ['\\*', 'x', false],
    ['a\\?', 'a?', true],
    // unicode counts characters, not UTF-16 units
    ['?', '😀', true],
    ['[😀]', '😀', true],
  ];

  it.each(cases)('given pattern %j, when matching %j, then %s', (pattern, text, expected) => {
    expect(globMatch(pattern, text)).toBe(expected);
  });
});

describe('patterns that do not compile are errors, not non-matches', () => {
  const invalid: Array<[pattern: string, detail: RegExp]> = [
    ['[', /unclosed "\["/],
    ['ns-[abc', /unclosed "\["/],
    ['[]', /empty/],
    ['[!]', /empty/],
    ['[z-a]', /reversed/],
    ['[a-z0]', /expected "\]"/],
    ['[a-', /unclosed/],
    ['{a,b', /unclosed "\{"/],
    ['x\\', /trailing/],
  ];

  it.each(invalid)('given %j, when compiled, then it throws %s', (pattern, detail) => {
    const attempt = () => compileGlob(pattern);
    expect(attempt).toThrow(GlobSyntaxError);
    expect(attempt).toThrow(detail);
    try {
      attempt();
    } catch (err) {
      expect((err as GlobSyntaxError).pattern).toBe(pattern);
    }
  });

  it('given a pattern that expands to too many alternatives, when compiled, then it throws', () => {
    const pattern = '{a,b}'.repeat(Math.log2(MAX_ALTERNATIVES) + 1);
    expect(() => compileGlob(pattern)).toThrow(/alternatives/);
  });
});

describe('limits: patterns are tenant input', () => {
  it('given a pattern one character over the maximum length, when compiled, then it throws naming the limit', () => {
    expect(() => compileGlob('a'.repeat(GLOB_LIMITS.maxLength))).not.toThrow();
    expect(() => compileGlob('a'.repeat(GLOB_LIMITS.maxLength + 1))).toThrow(/longer than 1024 characters/);
    // code points, not UTF-16 units
    expect(() => compileGlob('😀'.repeat(GLOB_LIMITS.maxLength))).not.toThrow();
  });

  it('given more stars than the limit, when compiled, then it throws; "**" counts once', () => {
    expect(() => compileGlob('*a'.repeat(GLOB_LIMITS.maxStars))).not.toThrow();
    expect(() => compileGlob('*a'.repeat(GLOB_LIMITS.maxStars + 1))).toThrow(/more than 64 "\*"/);
    expect(() => compileGlob('**a'.repeat(GLOB_LIMITS.maxStars))).not.toThrow();
  });

  it('given alternatives that expand to more units than the limit, when compiled, then it throws', () => {
    // 64 alternatives of 70 units each: 4480 > 4096
    const pattern = `{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}${'x'.repeat(64)}`;
    expect(() => compileGlob(pattern)).toThrow(/expands to more than 4096 characters and wildcards/);
    expect(() => compileGlob(`{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}${'x'.repeat(57)}`)).not.toThrow();
  });

  it('given a refused long pattern, when the error is read, then the message quotes only its start', () => {
    const pattern = 'x'.repeat(2_000);
    const err = (() => {
      try {
        compileGlob(pattern);
      } catch (e) {
        return e as GlobSyntaxError;
      }
    })();
    expect(err?.pattern).toBe(pattern);
    expect(err?.message.length).toBeLessThan(200);
    expect(err?.message).toMatch(/^invalid glob "x{64}…": longer than 1024 characters$/);
  });
});

describe('separators (used for sourceRepos, where Argo CD passes "/")', () => {
  const opts = { separators: '/' };
  it.each([
    ['https://git.example.com/team-a/*', 'https://git.example.com/team-a/apps', true],
    ['https://git.example.com/team-a/*', 'https://git.example.com/team-a/x/apps', false],
    ['https://git.example.com/team-a/**', 'https://git.example.com/team-a/x/apps', true],
    ['https://git.example.com/*/apps', 'https://git.example.com/team-a/apps', true],
    ['https://git.example.com/?', 'https://git.example.com//', false],
    ['*', 'a/b', false],
  ] as const)('given %j with "/" as separator, when matching %j, then %s', (pattern, text, expected) => {
    expect(globMatch(pattern, text, opts)).toBe(expected);
  });
});

describe('pathological patterns stay linear', () => {
  it('given a pattern with many stars and a text that almost matches, when matching, then it answers', () => {
    const pattern = '*a'.repeat(40) + '*b';
    const text = 'a'.repeat(5_000);
    expect(globMatch(pattern, text)).toBe(false);
    expect(globMatch(pattern, text + 'b')).toBe(true);
  });
});
