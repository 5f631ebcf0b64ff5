// Checkouts: one bare mirror per (credential actually used, repository URL) and one exported
// tree per (mirror, commit). Projects resolving to the same credential share both; projects whose
// credentials differ never share anything on disk. Fetches of one mirror are serialised; different
// mirrors fetch in parallel. Revisions resolve to commit SHAs; branch and tag resolutions are
// reused for a short TTL (push events and polling drop them early).
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { ValidationError } from '@capstan/service';
import { normalizeRepoUrl, redactRepoUrl } from '../credentials/repo-url.js';
import { DiskCache, directoryBytes } from './disk-cache.js';
import { classifyGitFailure, RepositoryTooLargeError, RevisionNotFoundError } from './git-errors.js';
import { GitRunner, type GitAuth } from './git-process.js';
import { KeyedLock } from './keyed-lock.js';
import type { CheckoutObserver } from '../observability/repo-metrics.js';
import { readCommitRef } from './local-refs.js';
import { cloneWithTree } from './cold-clone.js';
import { checkEgress, type EgressPolicy } from './egress.js';
import { cloneBranchHint, FULL_SHA, isAcceptableRevision, revisionCandidates } from './revision.js';

export interface CheckoutCredential {
  id: string;
  /** Changes whenever the credential changes, so an edited credential never reuses old fetches. */
  version: string;
  auth: GitAuth;
}

export interface CheckoutRequest {
  url: string;
  revision: string;
  /** The credential selected for this request; null for anonymous access. */
  credential: CheckoutCredential | null;
}

export interface Checkout {
  sha: string;
  /** Read-only export of the commit's tree (no .git). */
  dir: string;
  /** Identifies the (credential, URL) pair; part of every derived cache key. */
  repoKey: string;
  release(): void;
}

export interface CheckoutStoreOptions {
  cacheDir: string;
  /** Bound of mirrors + trees on disk; least recently used idle entries are evicted beyond it. */
  maxCacheBytes: number;
  /** A repository whose mirror exceeds this is refused (and its mirror removed). */
  maxRepoBytes: number;
  /** How long a branch/tag resolution is reused without asking the server again. */
  refCacheTtlMs: number;
  gitTimeoutMs: number;
  /** known_hosts file trusted for SSH repositories. */
  sshKnownHostsFile?: string;
  /** Networks git may and may not reach (tenants choose repository URLs). */
  egress: EgressPolicy;
  observer?: CheckoutObserver;
}

interface RefResolution {
  sha: string;
  at: number;
}

export class CheckoutStore {
  private readonly lock = new KeyedLock();
  private readonly refs = new Map<string, RefResolution>();
  private readonly cache: DiskCache;
  /** How many network fetches (clone or fetch) ran, per mirror key: lets tests see sharing. */
  readonly fetchCounts = new Map<string, number>();

  private constructor(
    private readonly opts: CheckoutStoreOptions,
    private readonly git: GitRunner,
  ) {
    this.cache = new DiskCache(opts.maxCacheBytes, (dir) => this.lock.busy(`fetch:${path.basename(dir)}`));
  }

  static async create(opts: CheckoutStoreOptions): Promise<CheckoutStore> {
    // The cache is disposable: a restart starts empty rather than trusting sizes it did not record.
    await rm(path.join(opts.cacheDir, 'mirrors'), { recursive: true, force: true });
    await rm(path.join(opts.cacheDir, 'trees'), { recursive: true, force: true });
    await mkdir(path.join(opts.cacheDir, 'mirrors'), { recursive: true, mode: 0o700 });
    await mkdir(path.join(opts.cacheDir, 'trees'), { recursive: true, mode: 0o700 });
    const git = await GitRunner.create({
      toolDir: path.join(opts.cacheDir, 'tools'),
      timeoutMs: opts.gitTimeoutMs,
      ...(opts.sshKnownHostsFile ? { knownHostsFile: opts.sshKnownHostsFile } : {}),
    });
    return new CheckoutStore(opts, git);
  }

  get usedBytes(): number {
    return this.cache.usedBytes;
  }

  repoKeyOf(req: Pick<CheckoutRequest, 'url' | 'credential'>): string {
    const who = req.credential ? `${req.credential.id}@${req.credential.version}` : 'anonymous';
    return createHash('sha256')
      .update(`${who}\n${normalizeRepoUrl(req.url)}`)
      .digest('hex')
      .slice(0, 32);
  }

  /** Resolves a revision (branch, tag, HEAD, full or abbreviated SHA) to a commit SHA. */
  async resolveRevision(req: CheckoutRequest): Promise<string> {
    if (!isAcceptableRevision(req.revision)) {
      throw new ValidationError([{ field: 'revision', description: 'is not a valid git revision' }]);
    }
    const key = this.repoKeyOf(req);
    const revision = req.revision.trim() || 'HEAD';
    if (FULL_SHA.test(revision) && this.cache.has(this.treeDir(key, revision.toLowerCase())))
      return revision.toLowerCase();
    const cached = this.freshRef(key, revision);
    if (cached) return cached;
    const asked = Date.now();
    return this.lock.run(`fetch:${key}`, async () => {
      // Someone may have fetched while this request waited for the lock.
      const again = this.freshRef(key, revision, asked);
      if (again) return again;
      const mirror = this.mirrorDir(key);
      const repository = `repository ${redactRepoUrl(req.url)}`;
      const what = `${repository} (revision ${revision})`;
      if (FULL_SHA.test(revision) && (await this.hasCommit(mirror, revision))) return revision.toLowerCase();
      await this.fetch(req, key, mirror, what);
      let sha = await this.lookup(mirror, revision);
      if (!sha && FULL_SHA.test(revision)) sha = await this.fetchCommit(req, mirror, revision, what);
      if (!sha) throw new RevisionNotFoundError(`revision ${revision} not found in ${repository}`);
      this.refs.set(`${key}\n${revision}`, { sha, at: Date.now() });
      return sha;
    });
  }

  /** Resolves the revision and returns a leased export of its tree; call release() when done. */
  async checkout(req: CheckoutRequest): Promise<Checkout> {
    const sha = await this.resolveRevision(req);
    const key = this.repoKeyOf(req);
    const dir = this.treeDir(key, sha);
    // has() and lease() run in one synchronous step, so no eviction can slip in between.
    let release = this.cache.has(dir) ? this.cache.lease(dir) : null;
    if (!release) {
      // Under the mirror's lock, so the mirror cannot be evicted or refetched while read.
      release = await this.lock.run(`fetch:${key}`, async () => {
        if (!this.cache.has(dir)) {
          const mirror = this.mirrorDir(key);
          // The mirror may have been evicted since the revision resolved from a cached tree.
          if (!(await this.hasCommit(mirror, sha))) {
            const what = `repository ${redactRepoUrl(req.url)}`;
            await this.fetch(req, key, mirror, what);
            if (!(await this.hasCommit(mirror, sha)) && !(await this.fetchCommit(req, mirror, sha, what))) {
              throw new RevisionNotFoundError(`revision ${sha} not found in ${what}`);
            }
          }
          await this.exportTree(mirror, sha, dir);
          // Measured off the request path: the bound is enforced from the next checkout on.
          this.cache.record(dir, 0);
          void directoryBytes(dir).then((bytes) => this.cache.resize(dir, bytes));
        }
        return this.cache.lease(dir);
      });
    }
    await this.cache.evict();
    return { sha, dir, repoKey: key, release };
  }

  /** Drops cached branch/tag resolutions (all, or for one URL), e.g. on a push event. */
  forgetRevisions(url?: string): void {
    if (!url) {
      this.refs.clear();
      return;
    }
    // Keys are hashed per credential, so drop by URL through every key seen for it.
    const normalized = normalizeRepoUrl(url);
    for (const key of [...this.refs.keys()]) {
      const repoKey = key.split('\n')[0] as string;
      if (this.urlsByKey.get(repoKey) === normalized) this.refs.delete(key);
    }
  }

  private readonly urlsByKey = new Map<string, string>();

  private freshRef(key: string, revision: string, notBefore = 0): string | null {
    const hit = this.refs.get(`${key}\n${revision}`);
    if (!hit) return null;
    if (Date.now() - hit.at >= this.opts.refCacheTtlMs || hit.at < notBefore) return null;
    return hit.sha;
  }

  private async fetch(req: CheckoutRequest, key: string, mirror: string, what: string): Promise<void> {
    const exists = await access(mirror).then(
      () => true,
      () => false,
    );
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    const request = { url: req.url, revision: req.revision, requestType: 'fetch' as const };
    try {
      const pin = await checkEgress(this.opts.egress, req.url, what);
      await this.fetchOnce(req, key, mirror, exists, what, pin);
      this.opts.observer?.gitRequest({ ...request, seconds: seconds(), failed: false });
    } catch (err) {
      this.opts.observer?.gitRequest({ ...request, seconds: seconds(), failed: true });
      throw err;
    }
  }

  private async fetchOnce(
    req: CheckoutRequest,
    key: string,
    mirror: string,
    exists: boolean,
    what: string,
    pin: string[],
  ): Promise<void> {
    this.urlsByKey.set(key, normalizeRepoUrl(req.url));
    this.fetchCounts.set(key, (this.fetchCounts.get(key) ?? 0) + 1);
    const auth = req.credential?.auth ?? null;
    let adopt = async (): Promise<void> => undefined;
    let discard = async (): Promise<void> => undefined;
    if (!exists) {
      const suffix = randomBytes(4).toString('hex');
      const mirrorTmp = `${mirror}.tmp-${suffix}`;
      const treeTmp = path.join(this.opts.cacheDir, 'trees', key, `.clone-${suffix}`);
      const cloned = await cloneWithTree(this.git, {
        url: req.url,
        auth,
        mirrorDir: mirrorTmp,
        treeDir: treeTmp,
        branch: cloneBranchHint(req.revision),
        maxBytes: this.opts.maxRepoBytes,
        config: pin,
      });
      if ('stderr' in cloned) {
        if (cloned.exceededBytes !== undefined) throw this.tooLarge(what, cloned.exceededBytes);
        throw classifyGitFailure(cloned.stderr, what);
      }
      await rename(mirrorTmp, mirror);
      adopt = () => this.adoptTree(key, cloned.treeSha, treeTmp);
      discard = () => rm(treeTmp, { recursive: true, force: true });
    } else {
      const result = await this.git.run(
        [
          'fetch',
          '--quiet',
          '--prune',
          '--force',
          '--no-tags',
          '--',
          req.url,
          '+HEAD:refs/capstan/HEAD',
          '+refs/heads/*:refs/remotes/origin/*',
          '+refs/tags/*:refs/tags/*',
        ],
        { cwd: mirror, auth, config: pin, sizeLimit: { dirs: [mirror], maxBytes: this.opts.maxRepoBytes } },
      );
      if (result.exceededBytes !== undefined) {
        await this.cache.remove(mirror);
        throw this.tooLarge(what, result.exceededBytes);
      }
      if (result.code !== 0) {
        if (/couldn't find remote ref HEAD/.test(result.stderr))
          throw new RevisionNotFoundError(`${what} has no commits`);
        throw classifyGitFailure(result.stderr, what);
      }
    }
    const bytes = await directoryBytes(mirror);
    if (bytes > this.opts.maxRepoBytes) {
      await discard();
      await this.cache.remove(mirror);
      throw this.tooLarge(what, bytes);
    }
    this.cache.record(mirror, bytes, () => this.dropRefs(key));
    await adopt();
    await this.cache.evict();
  }

  private tooLarge(what: string, bytes: number): RepositoryTooLargeError {
    return new RepositoryTooLargeError(
      `${what} is larger than the limit of ${this.opts.maxRepoBytes} bytes (${bytes} bytes on disk when stopped)`,
    );
  }

  /** Keeps the tree a cold clone checked out as the export of its commit. */
  private async adoptTree(key: string, sha: string | null, treeTmp: string): Promise<void> {
    const dir = sha ? this.treeDir(key, sha) : null;
    if (!dir || this.cache.has(dir)) {
      await rm(treeTmp, { recursive: true, force: true });
      return;
    }
    await rm(dir, { recursive: true, force: true });
    await rename(treeTmp, dir);
    this.cache.record(dir, 0);
    void directoryBytes(dir).then((bytes) => this.cache.resize(dir, bytes));
  }

  private async fetchCommit(
    req: CheckoutRequest,
    mirror: string,
    sha: string,
    what: string,
  ): Promise<string | null> {
    const result = await this.git.run(
      ['fetch', '--quiet', '--no-tags', '--', req.url, `+${sha}:refs/capstan/commits/${sha}`],
      {
        cwd: mirror,
        auth: req.credential?.auth ?? null,
        config: await checkEgress(this.opts.egress, req.url, what),
      },
    );
    if (result.code !== 0) {
      if (/not our ref|no such remote ref|unadvertised object|couldn't find remote ref/i.test(result.stderr))
        return null;
      throw classifyGitFailure(result.stderr, what);
    }
    return (await this.hasCommit(mirror, sha)) ? sha.toLowerCase() : null;
  }

  private async lookup(mirror: string, revision: string): Promise<string | null> {
    for (const candidate of revisionCandidates(revision)) {
      // Branch refs and HEADs always name commits: read them from the files, no git process.
      if (candidate.startsWith('refs/remotes/origin/') || candidate === 'refs/capstan/HEAD') {
        const sha = await readCommitRef(mirror, candidate);
        if (sha) return sha;
        continue;
      }
      const result = await this.git.run(
        ['rev-parse', '--verify', '--quiet', '--end-of-options', `${candidate}^{commit}`],
        { cwd: mirror },
      );
      if (result.code === 0) return result.stdout.trim();
    }
    return null;
  }

  private async hasCommit(mirror: string, sha: string): Promise<boolean> {
    const result = await this.git
      .run(['cat-file', '-e', `${sha}^{commit}`], { cwd: mirror })
      .catch(() => null);
    return result?.code === 0;
  }

  private async exportTree(mirror: string, sha: string, dir: string): Promise<void> {
    const tmp = `${dir}.tmp-${randomBytes(4).toString('hex')}`;
    await mkdir(tmp, { recursive: true, mode: 0o700 });
    try {
      await this.git.ok(['--git-dir', mirror, '--work-tree', tmp, 'read-tree', '-u', '--reset', sha], {
        env: { GIT_INDEX_FILE: `${tmp}.index` },
      });
      await rename(tmp, dir);
    } finally {
      await rm(tmp, { recursive: true, force: true });
      await rm(`${tmp}.index`, { force: true });
    }
  }

  private dropRefs(key: string): void {
    for (const k of [...this.refs.keys()]) if (k.startsWith(`${key}\n`)) this.refs.delete(k);
  }

  private mirrorDir(key: string): string {
    return path.join(this.opts.cacheDir, 'mirrors', key);
  }

  private treeDir(key: string, sha: string): string {
    return path.join(this.opts.cacheDir, 'trees', key, sha);
  }
}
