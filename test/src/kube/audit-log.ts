import { open, stat } from 'node:fs/promises';

/** The fields of a Kubernetes audit event (audit.k8s.io/v1 Event) that tests look at. */
export interface AuditEvent {
  auditID: string;
  stage: 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';
  level: string;
  verb: string;
  requestURI: string;
  user: { username: string; uid?: string; groups?: string[] };
  /** Present when the request impersonated someone: the identity the request ran as. */
  impersonatedUser?: { username: string; uid?: string; groups?: string[] };
  objectRef?: {
    resource?: string;
    namespace?: string;
    name?: string;
    apiGroup?: string;
    apiVersion?: string;
    subresource?: string;
  };
  responseStatus?: { code?: number; status?: string; reason?: string; message?: string };
  annotations?: Record<string, string>;
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
  userAgent?: string;
  sourceIPs?: string[];
}

/** The identity a request ran as: the impersonated user if any, else the authenticated one. */
export function effectiveUser(event: AuditEvent): string {
  return event.impersonatedUser?.username ?? event.user.username;
}

export interface WaitForAuditOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Resolve once at least this many events match (default 1). */
  count?: number;
  /** Only consider events written after this mark (see AuditLog.mark()). */
  since?: number;
}

/**
 * Reads the API server's JSON audit log (one event per line). A mark is a byte offset in the
 * file: take one before the requests a test cares about, then read or wait `since` it.
 *
 * `sentinel` sends a request only flush() waits for and returns its object name; `refresh`
 * brings `path` up to date before each mark or read when the server writes the log elsewhere
 * (k3s: inside its container).
 */
export class AuditLog {
  constructor(
    readonly path: string,
    private readonly sentinel?: () => Promise<string>,
    private readonly refresh?: () => Promise<void>,
  ) {}

  /** The current end of the log; pass it as `since` to see only later events. */
  async mark(): Promise<number> {
    await this.refresh?.();
    try {
      return (await stat(this.path)).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
  }

  /** All complete events in the log (from `since`, a mark), oldest first. */
  async read(options: { since?: number } = {}): Promise<AuditEvent[]> {
    await this.refresh?.();
    let handle;
    try {
      handle = await open(this.path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    try {
      const since = options.since ?? 0;
      const { size } = await handle.stat();
      if (size <= since) return [];
      const buf = Buffer.alloc(size - since);
      await handle.read(buf, 0, buf.length, since);
      const text = buf.toString('utf8');
      // A line still being written has no trailing newline yet: leave it for the next read.
      const end = text.lastIndexOf('\n');
      if (end < 0) return [];
      return text
        .slice(0, end)
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as AuditEvent);
    } finally {
      await handle.close();
    }
  }

  /**
   * Waits until at least `count` events (after `since`) satisfy the predicate and returns all
   * matching ones. The API server may answer a request a moment before its audit event reaches
   * the file, so tests wait rather than read once.
   */
  async waitFor(
    predicate: (e: AuditEvent) => boolean,
    options: WaitForAuditOptions = {},
  ): Promise<AuditEvent[]> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    const count = options.count ?? 1;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const readOptions = options.since === undefined ? {} : { since: options.since };
      const matches = (await this.read(readOptions)).filter(predicate);
      if (matches.length >= count) return matches;
      if (Date.now() > deadline) {
        throw new Error(
          `audit log ${this.path}: ${matches.length} of ${count} expected matching event(s) after ${timeoutMs} ms`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Makes sure every request that completed before this call is in the log: sends one more
   * (marker) request and waits for its event. Returns the events read at that point.
   */
  async flush(options: { since?: number; timeoutMs?: number } = {}): Promise<AuditEvent[]> {
    if (!this.sentinel) throw new Error('this AuditLog has no sentinel request: use waitFor()');
    const marker = await this.sentinel();
    await this.waitFor((e) => e.objectRef?.name === marker, {
      timeoutMs: options.timeoutMs ?? 10_000,
      ...(options.since === undefined ? {} : { since: options.since }),
    });
    const events = await this.read(options.since === undefined ? {} : { since: options.since });
    return events.filter((e) => e.objectRef?.name !== marker);
  }
}

/** Reads an audit log file once. */
export function readAuditLog(path: string, options: { since?: number } = {}): Promise<AuditEvent[]> {
  return new AuditLog(path).read(options);
}
