// Directory and file listings at a revision, for ApplicationSet git generators. Patterns are
// repository-relative globs (`*` stays within one path segment, `**` crosses them, `{a,b}` works);
// a pattern marked exclude removes matches. Symbolic links are never followed for listings. The
// patterns are the tenant's: they go through the project's one linear-time glob engine.
import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { compileGlob, GlobSyntaxError, type Glob } from '@capstan/glob';
import type { CheckoutCredential, CheckoutStore } from '../checkouts/checkout-store.js';
import { LruMap } from './lru-map.js';
import { ManifestRenderError } from './manifest-errors.js';

export interface PathPattern {
  pattern: string;
  exclude: boolean;
}

export interface ListedFile {
  path: string;
  /** UTF-8 content, when asked for. */
  content?: string;
}

const MAX_CONTENT_BYTES = 1024 * 1024;

function pathGlob(pattern: string): Glob {
  try {
    return compileGlob(pattern.replace(/^\/+/, ''), { separators: '/' });
  } catch (err) {
    if (err instanceof GlobSyntaxError) throw new ManifestRenderError(`path: ${err.message}`, { cause: err });
    throw err;
  }
}

function compile(patterns: readonly PathPattern[]): (rel: string) => boolean {
  const includes = patterns.filter((p) => !p.exclude).map((p) => pathGlob(p.pattern));
  const excludes = patterns.filter((p) => p.exclude).map((p) => pathGlob(p.pattern));
  return (rel) => includes.some((g) => g.match(rel)) && !excludes.some((g) => g.match(rel));
}

async function walk(root: string): Promise<{ dirs: string[]; files: string[] }> {
  const dirs: string[] = [];
  const files: string[] = [];
  const stack = [''];
  while (stack.length > 0) {
    const rel = stack.pop() as string;
    for (const name of await readdir(path.join(root, rel))) {
      if (name === '.git') continue;
      const child = rel ? `${rel}/${name}` : name;
      const info = await lstat(path.join(root, child));
      if (info.isDirectory()) {
        dirs.push(child);
        stack.push(child);
      } else if (info.isFile()) files.push(child);
    }
  }
  return { dirs: dirs.sort(), files: files.sort() };
}

export class RepoListing {
  private readonly cache = new LruMap<string, unknown>(512);

  constructor(private readonly checkouts: CheckoutStore) {}

  async listDirectories(req: {
    url: string;
    revision: string;
    credential: CheckoutCredential | null;
    patterns: PathPattern[];
  }): Promise<{ revision: string; paths: string[] }> {
    return this.withTree(req, 'dirs', async (root, sha) => {
      const match = compile(req.patterns);
      return { revision: sha, paths: (await walk(root)).dirs.filter(match) };
    });
  }

  async listFiles(req: {
    url: string;
    revision: string;
    credential: CheckoutCredential | null;
    patterns: PathPattern[];
    withContent: boolean;
  }): Promise<{ revision: string; files: ListedFile[] }> {
    return this.withTree(req, `files:${req.withContent}`, async (root, sha) => {
      const match = compile(req.patterns);
      const paths = (await walk(root)).files.filter(match);
      const files: ListedFile[] = [];
      for (const p of paths) {
        if (!req.withContent) {
          files.push({ path: p });
          continue;
        }
        const info = await lstat(path.join(root, p));
        if (info.size > MAX_CONTENT_BYTES)
          throw new ManifestRenderError(`file ${p} is larger than ${MAX_CONTENT_BYTES} bytes`);
        files.push({ path: p, content: await readFile(path.join(root, p), 'utf8') });
      }
      return { revision: sha, files };
    });
  }

  private async withTree<T>(
    req: { url: string; revision: string; credential: CheckoutCredential | null; patterns: PathPattern[] },
    kind: string,
    list: (root: string, sha: string) => Promise<T>,
  ): Promise<T> {
    const sha = await this.checkouts.resolveRevision(req);
    const key = JSON.stringify([this.checkouts.repoKeyOf(req), sha, kind, req.patterns]);
    const hit = this.cache.get(key);
    if (hit) return hit as T;
    const checkout = await this.checkouts.checkout({ ...req, revision: sha });
    try {
      const result = await list(await realpath(checkout.dir), sha);
      this.cache.set(key, result);
      return result;
    } finally {
      checkout.release();
    }
  }
}
