import { describe, expect, it } from 'vitest';
import { RecentKeys, RefusalSampler, TokenBuckets } from './limits.js';

describe('webhook limits', () => {
  it('refills a token bucket at its rate up to its capacity, per key', () => {
    let now = 0;
    const b = new TokenBuckets(2, 3, 10, () => now);
    expect([b.take('a'), b.take('a'), b.take('a'), b.take('a')]).toEqual([true, true, true, false]);
    expect(b.take('b')).toBe(true);
    now = 500; // one token back
    expect([b.take('a'), b.take('a')]).toEqual([true, false]);
    now = 100_000; // never more than the capacity
    expect([b.take('a'), b.take('a'), b.take('a'), b.take('a')]).toEqual([true, true, true, false]);
  });

  it('forgets the oldest key when full, so memory stays bounded', () => {
    const b = new TokenBuckets(0.001, 1, 2, () => 0);
    expect(b.take('a')).toBe(true);
    expect(b.take('b')).toBe(true);
    expect(b.take('c')).toBe(true); // 'a' forgotten
    expect(b.take('a')).toBe(true);
    expect(b.take('c')).toBe(false);
  });

  it('tells a key seen within the window', () => {
    let now = 0;
    const r = new RecentKeys(1000, 2, () => now);
    expect(r.seenRecently('x')).toBe(false);
    expect(r.seenRecently('x')).toBe(true);
    now = 2000;
    expect(r.seenRecently('x')).toBe(false);
    r.seenRecently('y');
    r.seenRecently('z'); // 'x' forgotten
    expect(r.seenRecently('x')).toBe(false);
  });

  it('samples refusals once per key and window, counting the rest', () => {
    let now = 0;
    const s = new RefusalSampler(1000, 10, () => now);
    expect(s.sample('k')).toBe(0);
    expect(s.sample('k')).toBeUndefined();
    expect(s.sample('k')).toBeUndefined();
    now = 1500;
    expect(s.sample('k')).toBe(2);
  });
});
