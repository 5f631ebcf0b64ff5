import { describe, expect, it } from 'vitest';
import { CliError } from '../errors.js';
import { sourceRevisionFlags } from './app-sync-revisions.js';

describe('app sync --revisions/--source-positions', () => {
  it('pairs each revision with its position; positions repeat or come comma-separated', () => {
    expect(sourceRevisionFlags([], [])).toEqual({ revisions: [], sourcePositions: [] });
    expect(sourceRevisionFlags(['0.0.1', 'v2,with-comma'], ['1', '2'])).toEqual({
      revisions: ['0.0.1', 'v2,with-comma'],
      sourcePositions: [1, 2],
    });
    expect(sourceRevisionFlags(['a', 'b'], ['2,1']).sourcePositions).toEqual([2, 1]);
  });

  it("refuses what Argo CD's CLI refuses, with its messages", () => {
    expect(() => sourceRevisionFlags(['a'], [])).toThrow(
      'While using --revisions and --source-positions, length of values for both flags should be same.',
    );
    expect(() => sourceRevisionFlags(['a', 'b'], ['1'])).toThrow('length of values for both flags');
    expect(() => sourceRevisionFlags(['a'], ['0'])).toThrow(
      'source-position cannot be less than or equal to 0, Counting starts at 1',
    );
    const bad = (() => {
      try {
        sourceRevisionFlags(['a'], ['first']);
      } catch (err) {
        return err;
      }
    })();
    expect(bad).toBeInstanceOf(CliError);
    expect((bad as CliError).message).toContain('--source-positions');
  });
});
