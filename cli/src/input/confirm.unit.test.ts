// When `appset delete` asks, goes ahead or refuses, and which answers it takes.
import { describe, expect, it } from 'vitest';
import { CliError } from '../errors.js';
import { mustAsk, parseAnswer } from './confirm.js';

describe('mustAsk', () => {
  it('does not ask with --yes, asks on a terminal, and refuses (exit status 2) otherwise', () => {
    expect(mustAsk('delete x', true, false)).toBe(false);
    expect(mustAsk('delete x', true, true)).toBe(false);
    expect(mustAsk('delete x', false, true)).toBe(true);
    expect(() => mustAsk("delete 'x' and its Applications", false, false)).toThrow(
      new CliError(
        "refusing to delete 'x' and its Applications without confirmation: stdin is not a terminal (pass --yes)",
        2,
      ),
    );
    try {
      mustAsk('delete x', false, false);
    } catch (err) {
      expect((err as CliError).exitCode).toBe(2);
    }
  });
});

describe('parseAnswer', () => {
  it("takes argocd's answers, A only when several objects are named", () => {
    expect(['y', 'YES', ' yes '].map((a) => parseAnswer(a, false))).toEqual(['yes', 'yes', 'yes']);
    expect(['n', 'No'].map((a) => parseAnswer(a, false))).toEqual(['no', 'no']);
    expect(parseAnswer('A', true)).toBe('all');
    expect(parseAnswer('all', true)).toBe('all');
    expect(parseAnswer('a', false)).toBeUndefined();
    expect(parseAnswer('', true)).toBeUndefined();
    expect(parseAnswer('sure', true)).toBeUndefined();
  });
});
