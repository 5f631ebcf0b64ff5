import { describe, expect, it } from 'vitest';
import { inputLimitIssues, textProblem } from './limits.js';

const limits = { maxDepth: 4, maxStringLength: 10, maxEntries: 3 };

describe('inputLimitIssues', () => {
  it('accepts a value within every bound', () => {
    expect(inputLimitIssues({ a: [1, 'x', { b: null }] }, limits)).toEqual([]);
  });

  it('names the field holding a NUL or a lone surrogate', () => {
    expect(inputLimitIssues({ spec: { source: ['ok', 'a\u0000b'] } }, limits)).toEqual([
      { path: 'spec.source[1]', message: 'value must not contain NUL (U+0000)' },
    ]);
    expect(inputLimitIssues({ x: 'a\uD800' }, limits)[0]?.message).toMatch(/lone UTF-16 surrogate/);
    expect(inputLimitIssues({ x: '\uDC00a' }, limits)[0]?.message).toMatch(/lone UTF-16 surrogate/);
    expect(inputLimitIssues({ x: '\uD83D\uDE00' }, limits)).toEqual([]);
  });

  it('checks field names too, without echoing them', () => {
    const issues = inputLimitIssues({ a: { ['k\u0000']: 1 } }, limits);
    expect(issues).toEqual([{ path: 'a', message: 'field name #1 must not contain NUL (U+0000)' }]);
  });

  it('bounds depth, string length and entries', () => {
    expect(inputLimitIssues({ a: { b: { c: { d: {} } } } }, limits)).toEqual([
      { path: 'a.b.c.d', message: 'nested deeper than 4 levels' },
    ]);
    expect(inputLimitIssues({ s: 'x'.repeat(11) }, limits)).toEqual([
      { path: 's', message: 'value is longer than 10 characters' },
    ]);
    expect(inputLimitIssues({ s: 'x'.repeat(11) }, limits, new Set(['s']))).toEqual([]);
    expect(inputLimitIssues({ l: [1, 2, 3, 4] }, limits)).toEqual([
      { path: 'l', message: 'has more than 3 entries' },
    ]);
    expect(inputLimitIssues({ a: 1, b: 2, c: 3, d: 4 }, limits)).toEqual([
      { path: '', message: 'has more than 3 fields' },
    ]);
  });

  it('walks a value nested far deeper than the call stack allows without overflowing', () => {
    let v: unknown = 'leaf';
    for (let i = 0; i < 200_000; i++) v = [v];
    const issues = inputLimitIssues(v, { ...limits, maxDepth: 64 });
    expect(issues).toHaveLength(1);
    expect(issues[0]?.message).toBe('nested deeper than 64 levels');
  });

  it('textProblem accepts ordinary text', () => {
    expect(textProblem('héllo wörld ✓')).toBeUndefined();
  });
});
