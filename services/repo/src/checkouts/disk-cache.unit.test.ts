import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DiskCache, directoryBytes } from './disk-cache.js';
import { KeyedLock } from './keyed-lock.js';

async function entry(root: string, name: string, bytes: number): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'f'), Buffer.alloc(bytes));
  return dir;
}

describe('DiskCache', () => {
  const roots: string[] = [];
  afterAll(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true });
  });

  it('evicts least recently used idle entries until the bound holds, keeping leased and busy ones', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'capstan-disk-cache-'));
    roots.push(root);
    const busy = new Set<string>();
    const cache = new DiskCache(250, (dir) => busy.has(dir));
    const a = await entry(root, 'a', 100);
    const b = await entry(root, 'b', 100);
    const c = await entry(root, 'c', 100);
    const d = await entry(root, 'd', 100);
    for (const dir of [a, b, c, d]) cache.record(dir, await directoryBytes(dir));
    expect(cache.usedBytes).toBe(400);
    const release = cache.lease(a); // oldest, but held
    busy.add(b); // e.g. being fetched
    cache.lease(c)(); // a use, released at once
    // Idle ones go oldest first (d, then c, used since) until 400 -> 200 fits under 250.
    expect(await cache.evict()).toEqual([d, c]);
    expect(cache.usedBytes).toBe(200);
    await expect(stat(d)).rejects.toThrow();
    expect((await stat(a)).isDirectory()).toBe(true);
    release();
    busy.clear();
    cache.record(await entry(root, 'e', 100), 100);
    // b was used longer ago than a (whose lease counted as a use).
    expect(await cache.evict()).toEqual([b]);
    expect(cache.usedBytes).toBe(200);
  });

  it('applies late size measurements only to entries still present', () => {
    const cache = new DiskCache(1000);
    cache.record('/x', 0);
    cache.resize('/x', 300);
    cache.resize('/gone', 500);
    expect(cache.usedBytes).toBe(300);
  });
});

describe('KeyedLock', () => {
  it('runs work for one key one at a time and different keys together', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const step = (name: string, ms: number) => async () => {
      log.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, ms));
      log.push(`end ${name}`);
    };
    await Promise.all([
      lock.run('r1', step('a1', 20)),
      lock.run('r1', step('a2', 1)),
      lock.run('r2', step('b', 1)),
    ]);
    expect(log.indexOf('end a1')).toBeLessThan(log.indexOf('start a2'));
    expect(log.indexOf('start b')).toBeLessThan(log.indexOf('end a1'));
    expect(lock.busy('r1')).toBe(false);
  });

  it('releases the key when work fails', async () => {
    const lock = new KeyedLock();
    await expect(lock.run('k', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await lock.run('k', () => Promise.resolve(42))).toBe(42);
  });
});
