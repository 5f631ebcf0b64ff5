import { describe, expect, it } from 'vitest';
import { lineDiff, pretty } from './diff';

describe('line diff', () => {
  it('keeps common lines and marks removed and added ones', () => {
    expect(lineDiff('a\nb\nc', 'a\nx\nc')).toEqual([
      { op: ' ', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'x' },
      { op: ' ', text: 'c' },
    ]);
  });

  it('shows a whole side as added when the other is empty', () => {
    expect(lineDiff('', 'a').filter((l) => l.op !== ' ')).toEqual([
      { op: '-', text: '' },
      { op: '+', text: 'a' },
    ]);
  });

  it('indents a JSON manifest and leaves an absent one empty', () => {
    expect(pretty('{"kind":"ConfigMap"}')).toBe('{\n  "kind": "ConfigMap"\n}');
    expect(pretty('null')).toBe('');
    expect(pretty(undefined)).toBe('');
  });
});
