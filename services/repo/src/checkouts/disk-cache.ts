// Accounting for the checkout cache on disk: every mirror and exported tree is an entry with its
// size and last use; when the total exceeds the bound, least recently used entries that nobody
// holds are deleted. Entries in use (leased trees, mirrors being fetched) are never removed.
import { lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';

interface Entry {
  bytes: number;
  lastUsed: number;
  leases: number;
  /** Called after the entry is evicted (e.g. to forget cached ref resolutions). */
  onEvict?: () => void;
}

export class DiskCache {
  private readonly entries = new Map<string, Entry>();
  private total = 0;
  private clock = 0;

  constructor(
    readonly maxBytes: number,
    /** Extra veto: entries whose key is busy elsewhere (e.g. a mirror under fetch) are kept. */
    private readonly isBusy: (dir: string) => boolean = () => false,
  ) {}

  get usedBytes(): number {
    return this.total;
  }

  has(dir: string): boolean {
    return this.entries.has(dir);
  }

  /** Records (or re-measures) an entry after it was written. */
  record(dir: string, bytes: number, onEvict?: () => void): void {
    const existing = this.entries.get(dir);
    if (existing) {
      this.total += bytes - existing.bytes;
      existing.bytes = bytes;
      existing.lastUsed = ++this.clock;
      if (onEvict) existing.onEvict = onEvict;
      return;
    }
    this.entries.set(dir, { bytes, lastUsed: ++this.clock, leases: 0, ...(onEvict ? { onEvict } : {}) });
    this.total += bytes;
  }

  /** Updates the size of an entry still present (a late measurement); ignores evicted ones. */
  resize(dir: string, bytes: number): void {
    const entry = this.entries.get(dir);
    if (!entry) return;
    this.total += bytes - entry.bytes;
    entry.bytes = bytes;
  }

  /** Marks an entry used and holds it until the returned release is called. */
  lease(dir: string): () => void {
    const entry = this.entries.get(dir);
    if (!entry) return () => undefined;
    entry.leases += 1;
    entry.lastUsed = ++this.clock;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.leases -= 1;
    };
  }

  /** Removes an entry now (e.g. a mirror that turned out too large). */
  async remove(dir: string): Promise<void> {
    const entry = this.entries.get(dir);
    if (entry) {
      this.entries.delete(dir);
      this.total -= entry.bytes;
    }
    await rm(dir, { recursive: true, force: true });
  }

  /** Evicts least recently used idle entries until the total fits; returns the evicted dirs. */
  async evict(): Promise<string[]> {
    if (this.total <= this.maxBytes) return [];
    const idle = [...this.entries.entries()]
      .filter(([dir, e]) => e.leases === 0 && !this.isBusy(dir))
      .sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    const evicted: string[] = [];
    for (const [dir, entry] of idle) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(dir);
      this.total -= entry.bytes;
      entry.onEvict?.();
      await rm(dir, { recursive: true, force: true });
      evicted.push(dir);
    }
    return evicted;
  }
}

/** Bytes used on disk by a directory tree (symbolic links count as themselves, not followed). */
export async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop() as string;
    let names: string[];
    try {
      names = await readdir(current);
    } catch {
      continue;
    }
    for (const name of names) {
      const full = path.join(current, name);
      const stat = await lstat(full).catch(() => null);
      if (!stat) continue;
      if (stat.isDirectory()) stack.push(full);
      else total += stat.size;
    }
  }
  return total;
}
