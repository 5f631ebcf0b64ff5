import { describe, expect, it } from 'vitest';
import { nextRetry, parseDuration, retryPolicyOf, RetryPolicyError } from './retry.js';

describe('syncPolicy.retry', () => {
  it('given Argo duration strings, when parsed, then bare integers are seconds and Go units are honoured', () => {
    expect(parseDuration('5')).toBe(5_000);
    expect(parseDuration('5s')).toBe(5_000);
    expect(parseDuration('3m')).toBe(180_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1.5s')).toBe(1_500);
    expect(parseDuration('soon')).toBeUndefined();
    expect(parseDuration('5 minutes')).toBeUndefined();
  });

  it('given no retry or limit 0, when read, then nothing is retried', () => {
    expect(retryPolicyOf(undefined)).toBeUndefined();
    expect(retryPolicyOf({ retry: {} })).toBeUndefined();
    expect(retryPolicyOf({ retry: { limit: 0 } })).toBeUndefined();
  });

  it("given a limit without backoff, when read, then Argo's defaults apply (5s, factor 2, at most 3m)", () => {
    expect(retryPolicyOf({ retry: { limit: 5 } })).toEqual({
      limit: 5,
      durationMs: 5_000,
      factor: 2,
      maxDurationMs: 180_000,
    });
  });

  it('given a backoff, when retries follow each other, then the wait grows by the factor up to maxDuration and stops at the limit', () => {
    const policy = retryPolicyOf({
      retry: { limit: 4, backoff: { duration: '2s', factor: 3, maxDuration: '30s' } },
    })!;
    expect([0, 1, 2, 3, 4].map((n) => nextRetry(policy, n)?.delayMs)).toEqual([
      2_000,
      6_000,
      18_000,
      30_000,
      undefined,
    ]);
  });

  it('given a negative limit, when retried many times, then retries never stop (Argo: Limit < 0)', () => {
    const policy = retryPolicyOf({ retry: { limit: -1, backoff: { duration: '1s', maxDuration: '4s' } } })!;
    expect(nextRetry(policy, 1_000)?.delayMs).toBe(4_000);
  });

  it('given a duration Argo cannot parse, when read, then the policy is refused with the field named', () => {
    expect(() => retryPolicyOf({ retry: { limit: 2, backoff: { duration: 'soon' } } })).toThrow(
      new RetryPolicyError('syncPolicy.retry.backoff.duration: unable to parse "soon" as a duration'),
    );
  });
});
