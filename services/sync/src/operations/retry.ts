// syncPolicy.retry as Argo CD reads it (pure, no I/O): `limit` retries of a failed sync (0 or
// absent: none; negative: without end, as Argo's `RetryCount < Limit || Limit < 0`), the n-th
// retry (counting from 0) waiting `duration * factor^n`, at most `maxDuration`. Durations are
// Argo's: a bare integer is seconds, otherwise a Go duration ("5s", "3m", "1h30m", "500ms").
// Defaults are Argo's: duration 5s, factor 2, maxDuration 3m.

export const DEFAULT_RETRY_DURATION_MS = 5_000;
export const DEFAULT_RETRY_FACTOR = 2;
export const DEFAULT_RETRY_MAX_DURATION_MS = 180_000;

export interface RetryPolicy {
  /** Retries after the first attempt; negative: unlimited. */
  limit: number;
  durationMs: number;
  factor: number;
  maxDurationMs: number;
}

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's time.ParseDuration (plus Argo's bare integer seconds), in milliseconds; undefined if invalid. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (/^[+-]?\d+$/.test(s)) return Number(s) * 1_000;
  const m = /^([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(s);
  if (!m) return s === '0' ? 0 : undefined;
  let total = 0;
  for (const part of s.slice(m[1]!.length).matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g))
    total += Number(part[1]) * UNIT_MS[part[2]!]!;
  return m[1] === '-' ? -total : total;
}

export class RetryPolicyError extends Error {}

/**
 * The Application's retry policy, or undefined when it retries nothing. Throws RetryPolicyError
 * for a duration Argo could not parse (Argo fails the operation with "failed to retry" then).
 */
export function retryPolicyOf(syncPolicy: unknown): RetryPolicy | undefined {
  const retry = (syncPolicy as { retry?: unknown } | undefined)?.retry as
    | { limit?: unknown; backoff?: { duration?: unknown; factor?: unknown; maxDuration?: unknown } }
    | undefined;
  if (!retry || typeof retry !== 'object') return undefined;
  const limit = typeof retry.limit === 'number' && Number.isInteger(retry.limit) ? retry.limit : 0;
  if (limit === 0) return undefined;
  const backoff = retry.backoff ?? {};
  const duration = (value: unknown, fallback: number, name: string) => {
    if (value === undefined || value === '') return fallback;
    const ms = typeof value === 'string' ? parseDuration(value) : undefined;
    if (ms === undefined || ms < 0)
      throw new RetryPolicyError(
        `syncPolicy.retry.backoff.${name}: unable to parse ${JSON.stringify(value)} as a duration`,
      );
    return ms;
  };
  const factor =
    typeof backoff.factor === 'number' && Number.isFinite(backoff.factor) && backoff.factor >= 0
      ? backoff.factor
      : DEFAULT_RETRY_FACTOR;
  return {
    limit,
    durationMs: duration(backoff.duration, DEFAULT_RETRY_DURATION_MS, 'duration'),
    factor,
    maxDurationMs: duration(backoff.maxDuration, DEFAULT_RETRY_MAX_DURATION_MS, 'maxDuration'),
  };
}

/**
 * After `retriesSoFar` retries, whether one more is due and after how long (Argo CD's NextRetryAt:
 * the first retry waits `duration`; maxDuration 0 means no cap).
 */
export function nextRetry(policy: RetryPolicy, retriesSoFar: number): { delayMs: number } | undefined {
  if (policy.limit >= 0 && retriesSoFar >= policy.limit) return undefined;
  const wait = policy.durationMs * policy.factor ** retriesSoFar;
  const delayMs = policy.maxDurationMs > 0 ? Math.min(policy.maxDurationMs, wait) : wait;
  return { delayMs: Math.round(Math.min(delayMs, 2 ** 31 - 1)) };
}
