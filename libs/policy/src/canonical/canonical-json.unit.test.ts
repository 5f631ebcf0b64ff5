import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalDigest, canonicalJson, sameJson } from './canonical-json.js';

describe('canonical JSON', () => {
  it('sorts keys at every depth in code-unit order and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, B: 2 }], c: null }, Z: 'x' })).toBe(
      '{"Z":"x","a":{"c":null,"d":[3,{"B":2,"z":1}]},"b":1}',
    );
    expect(sameJson({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
    expect(sameJson({ b: [1, 2] }, { b: [2, 1] })).toBe(false);
  });

  it('writes dates as ISO strings and leaves undefined properties out', () => {
    const at = new Date('2026-11-25T08:00:00.123Z');
    expect(canonicalJson({ at, gone: undefined, list: [undefined] })).toBe(
      '{"at":"2026-11-25T08:00:00.123Z","list":[null]}',
    );
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
  });

  it('digests the canonical text after its prefix lines', () => {
    const expected = createHash('sha256').update('t\nprev\n{"a":1,"b":2}').digest('hex');
    expect(canonicalDigest({ b: 2, a: 1 }, 't', 'prev')).toBe(expected);
    expect(canonicalDigest({ a: 1 })).toBe(createHash('sha256').update('{"a":1}').digest('hex'));
  });
});
