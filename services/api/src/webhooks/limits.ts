// Bounds on the webhook, per api replica: a token bucket per sender address and per repository, a
// window of recent pushes (the same push delivered again within a minute announces nothing), and a
// count of deliveries being read at once. Every map is bounded (oldest entries forgotten first), so
// a sender cycling through addresses or repository names cannot grow memory.

export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly capacity: number,
    private readonly maxKeys = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes a token for `key`; false when its bucket is empty. */
  take(key: string): boolean {
    const t = this.now();
    const b = this.buckets.get(key);
    let tokens = this.capacity;
    if (b) {
      tokens = Math.min(this.capacity, b.tokens + ((t - b.at) / 1000) * this.ratePerSecond);
      this.buckets.delete(key);
    } else if (this.buckets.size >= this.maxKeys) {
      this.buckets.delete(this.buckets.keys().next().value!);
    }
    const ok = tokens >= 1;
    this.buckets.set(key, { tokens: ok ? tokens - 1 : tokens, at: t });
    return ok;
  }
}

/** Keys seen within `windowMs` (insertion order; bounded). */
export class RecentKeys {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly maxKeys = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when `key` was seen within the window; records it either way. */
  seenRecently(key: string): boolean {
    const t = this.now();
    const at = this.seen.get(key);
    this.seen.delete(key);
    if (this.seen.size >= this.maxKeys) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(key, t);
    return at !== undefined && t - at < this.windowMs;
  }
}

/** Deliveries refused for load are audited once per key and window, with how many were refused. */
export class RefusalSampler {
  private readonly counts = new Map<string, { since: number; suppressed: number }>();

  constructor(
    private readonly windowMs = 60_000,
    private readonly maxKeys = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The number of refusals not audited before this one, or undefined: do not audit this one. */
  sample(key: string): number | undefined {
    const t = this.now();
    const c = this.counts.get(key);
    if (c && t - c.since < this.windowMs) {
      c.suppressed += 1;
      return undefined;
    }
    if (!c && this.counts.size >= this.maxKeys) this.counts.delete(this.counts.keys().next().value!);
    this.counts.set(key, { since: t, suppressed: 0 });
    return c?.suppressed ?? 0;
  }
}
