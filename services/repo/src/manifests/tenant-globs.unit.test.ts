// The include/exclude globs of a directory source are a tenant's input: they must answer in bounded
// time whatever the pattern (a backtracking matcher spent seconds on `*a*a…*b` against a name of a
// few dozen characters), match as Argo CD matches them, and refuse a pattern that does not compile
// with the field named.
import { describe, expect, it } from 'vitest';
import { globMatcher } from './directory-source.js';
import { ManifestRenderError } from './manifest-errors.js';

describe('directory include/exclude globs', () => {
  it('given the pathological pattern of issue 10 and a 4 KiB path, when matched, then it answers correctly', () => {
    const matcher = globMatcher(`${'*a'.repeat(11)}*b`, 'directory.include');
    expect(matcher('a'.repeat(4096))).toBe(false);
    expect(matcher(`${'a'.repeat(4096)}b`)).toBe(true);
  });

  it('matches the path relative to the Application directory as Argo CD does: * crosses /', () => {
    expect(globMatcher('*.json')('nested/b.json')).toBe(true);
    expect(globMatcher('{b.json,nested/*}')('nested/skip.yaml')).toBe(true);
    expect(globMatcher('skip.yaml')('nested/skip.yaml')).toBe(false);
    expect(globMatcher('')('a.yaml')).toBe(false);
  });

  it('refuses a pattern that does not compile, naming the field', () => {
    expect(() => globMatcher('[a-', 'directory.exclude')).toThrow(ManifestRenderError);
    expect(() => globMatcher('[a-', 'directory.exclude')).toThrow(/^directory\.exclude: invalid glob/);
  });
});
