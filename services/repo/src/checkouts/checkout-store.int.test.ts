import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSshKeyPair, startGitServer, type GitServer, type TestRepository } from '@capstan/test/git';
import { CheckoutStore, type CheckoutCredential } from './checkout-store.js';
import {
  EgressDeniedError,
  HostKeyUnknownError,
  RepositoryAuthError,
  RepositoryTooLargeError,
  RepositoryUnavailableError,
  RevisionNotFoundError,
} from './git-errors.js';
import { LOCAL_GIT_EGRESS } from '../test-support/egress.js';
import { DEFAULT_DENIED_NETWORKS, egressPolicy } from './egress.js';

const execFileAsync = promisify(execFile);
const CANARY = 'canary-Zq81-never-visible';

describe('CheckoutStore against a real git server', () => {
  let server: GitServer;
  let cacheDir: string;
  let store: CheckoutStore;
  let repo: TestRepository;
  let first: string;
  let second: string;
  const credA: CheckoutCredential = {
    id: 'cred-a',
    version: '1',
    auth: { username: 'team-a', password: CANARY },
  };
  const credB: CheckoutCredential = {
    id: 'cred-b',
    version: '1',
    auth: { username: 'team-b', password: 'pw-b' },
  };

  beforeAll(async () => {
    server = await startGitServer({ ssh: true });
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'capstan-checkouts-'));
    store = await CheckoutStore.create({
      cacheDir,
      maxCacheBytes: 50 * 1024 * 1024,
      maxRepoBytes: 10 * 1024 * 1024,
      refCacheTtlMs: 60_000,
      gitTimeoutMs: 30_000,
      egress: LOCAL_GIT_EGRESS,
    });
    repo = await server.createRepository('shared/apps.git', {
      credentials: [
        { username: 'team-a', password: CANARY },
        { username: 'team-b', password: 'pw-b' },
      ],
    });
    first = await repo.commit({ 'app/config.yaml': 'version: 1\n' });
    await repo.tag('v1', first);
    second = await repo.commit({ 'app/config.yaml': 'version: 2\n' });
    await repo.commit({ 'app/config.yaml': 'version: feature\n' }, { branch: 'feature' });
  });
  afterAll(async () => {
    await server?.close();
    await rm(cacheDir, { recursive: true, force: true });
  });

  it('resolves branches, tags, HEAD and SHAs to commits', async () => {
    const req = (revision: string) => ({ url: repo.url, revision, credential: credA });
    expect(await store.resolveRevision(req('HEAD'))).toBe(second);
    expect(await store.resolveRevision(req(''))).toBe(second);
    expect(await store.resolveRevision(req('main'))).toBe(second);
    expect(await store.resolveRevision(req('v1'))).toBe(first);
    expect(await store.resolveRevision(req('refs/tags/v1'))).toBe(first);
    expect(await store.resolveRevision(req(first))).toBe(first);
    expect(await store.resolveRevision(req(first.slice(0, 10)))).toBe(first);
    expect(await store.resolveRevision(req('feature'))).toBe(await repo.sha('feature'));
  });

  it('checks out a branch or tag in the first clone and still knows HEAD and the other refs', async () => {
    const fresh = await server.createRepository('cold-branch.git');
    const main = await fresh.commit({ 'a.yaml': 'branch: main\n' });
    const feature = await fresh.commit({ 'a.yaml': 'branch: feature\n' }, { branch: 'feature' });
    await fresh.tag('v9', main);
    const viaFeature = await store.checkout({ url: fresh.url, revision: 'feature', credential: null });
    expect(viaFeature.sha).toBe(feature);
    expect(await readFile(path.join(viaFeature.dir, 'a.yaml'), 'utf8')).toBe('branch: feature\n');
    viaFeature.release();
    const head = await store.checkout({ url: fresh.url, revision: 'HEAD', credential: null });
    expect(head.sha).toBe(main);
    expect(await readFile(path.join(head.dir, 'a.yaml'), 'utf8')).toBe('branch: main\n');
    head.release();
    expect(await store.resolveRevision({ url: fresh.url, revision: 'v9', credential: null })).toBe(main);
    const viaTag = await server.createRepository('cold-tag.git');
    const tagged = await viaTag.commit({ 'b.yaml': 'b: 1\n' });
    await viaTag.commit({ 'b.yaml': 'b: 2\n' });
    await viaTag.tag('v1', tagged);
    const t = await store.checkout({ url: viaTag.url, revision: 'v1', credential: null });
    expect(await readFile(path.join(t.dir, 'b.yaml'), 'utf8')).toBe('b: 1\n');
    t.release();
  });

  it('exports the tree of the resolved commit', async () => {
    const checkout = await store.checkout({ url: repo.url, revision: 'v1', credential: credA });
    try {
      expect(checkout.sha).toBe(first);
      expect(await readFile(path.join(checkout.dir, 'app/config.yaml'), 'utf8')).toBe('version: 1\n');
      await expect(stat(path.join(checkout.dir, '.git'))).rejects.toThrow();
    } finally {
      checkout.release();
    }
  });

  it('keeps checkouts of different credentials apart and shares one per credential', async () => {
    const a1 = await store.checkout({ url: repo.url, revision: 'main', credential: credA });
    const a2 = await store.checkout({ url: `${repo.url}`, revision: 'main', credential: credA });
    const b = await store.checkout({ url: repo.url, revision: 'main', credential: credB });
    expect(a1.dir).toBe(a2.dir);
    expect(b.dir).not.toBe(a1.dir);
    expect(b.repoKey).not.toBe(a1.repoKey);
    expect(server.requests.some((r) => r.username === 'team-b' && r.status === 200)).toBe(true);
    for (const c of [a1, a2, b]) c.release();
  });

  it('serialises concurrent fetches of one repository and reuses the result', async () => {
    const fresh = await server.createRepository('busy.git');
    await fresh.commit({ 'x.yaml': 'x: 1\n' });
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        store.resolveRevision({ url: fresh.url, revision: 'main', credential: null }),
      ),
    );
    expect(new Set(results).size).toBe(1);
    expect(store.fetchCounts.get(store.repoKeyOf({ url: fresh.url, credential: null }))).toBe(1);
  });

  it('sees new commits once cached resolutions are dropped', async () => {
    const moving = await server.createRepository('moving.git');
    const before = await moving.commit({ 'a.yaml': 'a: 1\n' });
    expect(await store.resolveRevision({ url: moving.url, revision: 'main', credential: null })).toBe(before);
    const after = await moving.commit({ 'a.yaml': 'a: 2\n' });
    store.forgetRevisions(moving.url);
    expect(await store.resolveRevision({ url: moving.url, revision: 'main', credential: null })).toBe(after);
  });

  it('reports wrong and missing credentials without revealing the secret', async () => {
    const wrong: CheckoutCredential = {
      id: 'cred-wrong',
      version: '1',
      auth: { username: 'team-a', password: `${CANARY}-wrong` },
    };
    const err = await store
      .resolveRevision({ url: repo.url, revision: 'main', credential: wrong })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RepositoryAuthError);
    expect(String((err as Error).message)).toBe(
      `authentication to repository ${repo.url} (revision main) failed`,
    );
    expect(JSON.stringify({ m: (err as Error).message, s: (err as Error).stack })).not.toContain(CANARY);
    await expect(
      store.resolveRevision({ url: repo.url, revision: 'main', credential: null }),
    ).rejects.toBeInstanceOf(RepositoryAuthError);
  });

  it('names the repository and revision when a revision is missing', async () => {
    await expect(
      store.resolveRevision({ url: repo.url, revision: 'no-such-branch', credential: credA }),
    ).rejects.toThrow(
      new RevisionNotFoundError(`revision no-such-branch not found in repository ${repo.url}`),
    );
    await expect(
      store.resolveRevision({ url: repo.url, revision: 'f'.repeat(40), credential: credA }),
    ).rejects.toBeInstanceOf(RevisionNotFoundError);
  });

  it('reports an unreachable server as unavailable', async () => {
    const err = await store
      .resolveRevision({ url: 'http://127.0.0.1:1/nothing.git', revision: 'main', credential: null })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RepositoryUnavailableError);
    expect((err as RepositoryUnavailableError).retryable).toBe(true);
  });

  it('refuses a repository above the size limit and leaves other caches alone', async () => {
    const small = await CheckoutStore.create({
      cacheDir: path.join(cacheDir, 'limited'),
      maxCacheBytes: 50e6,
      maxRepoBytes: 64 * 1024,
      refCacheTtlMs: 0,
      gitTimeoutMs: 30_000,
      egress: LOCAL_GIT_EGRESS,
    });
    const big = await server.createRepository('big.git');
    const { randomBytes } = await import('node:crypto');
    await big.commit({ 'blob.bin': randomBytes(256 * 1024) });
    const okRepo = await server.createRepository('ok.git');
    await okRepo.commit({ 'a.yaml': 'a: 1\n' });
    const okCheckout = await small.checkout({ url: okRepo.url, revision: 'main', credential: null });
    await expect(small.checkout({ url: big.url, revision: 'main', credential: null })).rejects.toBeInstanceOf(
      RepositoryTooLargeError,
    );
    expect(await readFile(path.join(okCheckout.dir, 'a.yaml'), 'utf8')).toBe('a: 1\n');
    okCheckout.release();
  });

  it('stops a download as soon as the repository outgrows the limit', async () => {
    const { randomBytes } = await import('node:crypto');
    const fullSize = 12 * 1024 * 1024;
    // Served at 2 MiB/s, so the transfer is still running when the limit is crossed.
    const huge = await server.createRepository('huge.git', { throttleBytesPerSecond: 2 * 1024 * 1024 });
    await huge.commit({ 'blob.bin': randomBytes(fullSize) });
    const limited = await CheckoutStore.create({
      cacheDir: path.join(cacheDir, 'huge'),
      maxCacheBytes: 50e6,
      maxRepoBytes: 1024 * 1024,
      refCacheTtlMs: 0,
      gitTimeoutMs: 60_000,
      egress: LOCAL_GIT_EGRESS,
    });
    const err = await limited
      .resolveRevision({ url: huge.url, revision: 'main', credential: null })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RepositoryTooLargeError);
    const stoppedAt = Number(/\((\d+) bytes on disk when stopped\)/.exec((err as Error).message)?.[1]);
    expect(stoppedAt).toBeGreaterThan(1024 * 1024);
    expect(stoppedAt).toBeLessThan(fullSize);
    expect((await readdir(path.join(cacheDir, 'huge', 'mirrors'))).length).toBe(0);
  });

  it('evicts least recently used idle trees beyond the bound, never leased ones', async () => {
    const tiny = await CheckoutStore.create({
      cacheDir: path.join(cacheDir, 'tiny'),
      maxCacheBytes: 1,
      maxRepoBytes: 10e6,
      refCacheTtlMs: 60_000,
      gitTimeoutMs: 30_000,
      egress: LOCAL_GIT_EGRESS,
    });
    const held = await tiny.checkout({ url: repo.url, revision: 'v1', credential: credA });
    const other = await tiny.checkout({ url: repo.url, revision: 'main', credential: credA });
    other.release();
    const third = await tiny.checkout({ url: repo.url, revision: 'feature', credential: credA });
    // The held tree survives every eviction; the released one is gone.
    expect(await readFile(path.join(held.dir, 'app/config.yaml'), 'utf8')).toBe('version: 1\n');
    await expect(stat(other.dir)).rejects.toThrow();
    held.release();
    third.release();
  });

  it('never puts the secret on any command line', async () => {
    const seen: string[] = [];
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const { stdout } = await execFileAsync('ps', ['-eo', 'args']);
        seen.push(stdout);
      }
    })();
    const fresh = await server.createRepository('ps-check.git', {
      credentials: [{ username: 'team-a', password: CANARY }],
    });
    await fresh.commit({ 'a.yaml': 'a: 1\n' });
    for (let i = 0; i < 5; i++) {
      const c = await store.checkout({
        url: fresh.url,
        revision: 'main',
        credential: { ...credA, version: `ps-${i}` },
      });
      c.release();
    }
    polling = false;
    await poll;
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.join('\n')).not.toContain(CANARY);
    expect(seen.join('\n')).toMatch(/git/);
  });

  it('checks out over SSH with a deploy key, trusting only known host keys', async () => {
    const deploy = generateSshKeyPair();
    const stranger = generateSshKeyPair();
    const sshRepo = await server.createRepository('ssh/apps.git', { sshKeys: [deploy.publicKey] });
    // The stranger's key is a deploy key of another repository: it authenticates, then is denied.
    await server.createRepository('ssh/other.git', { sshKeys: [stranger.publicKey] });
    await sshRepo.commit({ 'app/ssh.yaml': 'via: ssh\n' });
    const knownHosts = path.join(cacheDir, 'known_hosts');
    await writeFile(knownHosts, `${server.ssh?.knownHostsLine}\n`);
    const sshStore = await CheckoutStore.create({
      cacheDir: path.join(cacheDir, 'ssh'),
      maxCacheBytes: 50e6,
      maxRepoBytes: 10e6,
      refCacheTtlMs: 0,
      gitTimeoutMs: 30_000,
      egress: LOCAL_GIT_EGRESS,
      sshKnownHostsFile: knownHosts,
    });
    const keyBody = deploy.privateKey.split('\n')[1] ?? '';
    expect(keyBody.length).toBeGreaterThan(20);
    const seen: string[] = [];
    let polling = true;
    const poll = (async () => {
      while (polling) seen.push((await execFileAsync('ps', ['-eo', 'args'])).stdout);
    })();
    const withKey = (key: string): CheckoutCredential => ({
      id: `ssh-${key.length}-${key.slice(-20)}`,
      version: '1',
      auth: { username: '', sshPrivateKey: key },
    });
    const checkout = await sshStore.checkout({
      url: sshRepo.sshUrl,
      revision: 'main',
      credential: withKey(deploy.privateKey),
    });
    expect(await readFile(path.join(checkout.dir, 'app/ssh.yaml'), 'utf8')).toBe('via: ssh\n');
    checkout.release();
    await expect(
      sshStore.resolveRevision({
        url: sshRepo.sshUrl,
        revision: 'main',
        credential: withKey(stranger.privateKey),
      }),
    ).rejects.toBeInstanceOf(RepositoryAuthError);
    // The default store trusts no SSH host key at all.
    await expect(
      store.resolveRevision({
        url: sshRepo.sshUrl,
        revision: 'main',
        credential: withKey(deploy.privateKey),
      }),
    ).rejects.toBeInstanceOf(HostKeyUnknownError);
    polling = false;
    await poll;
    expect(server.ssh?.requests.filter((r) => r.repository === 'ssh/apps.git').map((r) => r.status)).toEqual(
      expect.arrayContaining(['ok', 'denied']),
    );
    expect(seen.join('\n')).not.toContain(keyBody);
    // Key files live only for the command that needed them.
    expect(
      (await readdir(path.join(cacheDir, 'ssh', 'tools', 'scratch'))).filter((d) => d.startsWith('ssh-')),
    ).toEqual([]);
  });
  it('refuses repositories on networks the repo service may not reach, before git runs', async () => {
    const guarded = await CheckoutStore.create({
      cacheDir: path.join(cacheDir, 'guarded'),
      maxCacheBytes: 50e6,
      maxRepoBytes: 10e6,
      refCacheTtlMs: 0,
      gitTimeoutMs: 30_000,
      egress: egressPolicy({ denied: DEFAULT_DENIED_NETWORKS, allowed: '' }),
    });
    const byName = repo.url.replace('127.0.0.1', 'localhost');
    for (const url of [repo.url, byName]) {
      await expect(guarded.resolveRevision({ url, revision: 'main', credential: credA })).rejects.toThrow(
        EgressDeniedError,
      );
    }
    expect([...guarded.fetchCounts.values()].reduce((a, b) => a + b, 0)).toBe(0);
    // Allowed, a host name works through the pin (git connects to the address that was checked).
    const pinned = await store.checkout({ url: byName, revision: 'v1', credential: credA });
    expect(pinned.sha).toBe(first);
    pinned.release();
  });
});
