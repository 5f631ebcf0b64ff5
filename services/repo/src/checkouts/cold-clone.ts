// The first fetch of a repository is one `git clone`: the mirror (the clone's git directory, kept
// apart with --separate-git-dir) and, in the same process and network round, the tree of the
// requested branch or tag (or the default branch), so a cold checkout costs what a plain
// `git clone` costs. The tree becomes an ordinary exported tree; the mirror serves later fetches.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { GitAuth, GitRunner } from './git-process.js';
import { readCommitRef } from './local-refs.js';

export interface ClonedRepository {
  /** The commit checked out into `treeDir`, or null when nothing was (empty repository). */
  treeSha: string | null;
}

export interface CloneFailure {
  stderr: string;
  /** Set when the download was stopped for outgrowing the size limit. */
  exceededBytes?: number;
}

export async function cloneWithTree(
  git: GitRunner,
  opts: {
    url: string;
    auth: GitAuth | null;
    mirrorDir: string;
    treeDir: string;
    branch: string | null;
    maxBytes: number;
    /** The egress pin (checkEgress). */
    config: string[];
  },
): Promise<ClonedRepository | CloneFailure> {
  const attempt = (branch: string | null) =>
    git.run(
      [
        'clone',
        '--quiet',
        // No hook or sample files: the mirror only ever holds objects and refs.
        '--template=',
        '--separate-git-dir',
        opts.mirrorDir,
        ...(branch ? ['--branch', branch] : []),
        '--',
        opts.url,
        opts.treeDir,
      ],
      {
        auth: opts.auth,
        config: opts.config,
        sizeLimit: { dirs: [opts.mirrorDir], maxBytes: opts.maxBytes },
      },
    );
  let result = await attempt(opts.branch);
  if (result.code !== 0 && opts.branch && /Remote branch .* not found/i.test(result.stderr)) {
    // Not a branch or tag name on the remote (maybe a ref the lookup still finds): clone the default.
    await cleanup(opts);
    result = await attempt(null);
  }
  if (result.code !== 0 || result.exceededBytes !== undefined) {
    await cleanup(opts);
    return {
      stderr: result.stderr,
      ...(result.exceededBytes !== undefined ? { exceededBytes: result.exceededBytes } : {}),
    };
  }
  // The tree is an export, not a work tree: drop the link to the git directory and the index.
  await rm(path.join(opts.treeDir, '.git'), { force: true });
  await rm(path.join(opts.mirrorDir, 'index'), { force: true });
  // The clone's HEAD names the checked-out commit (detached for a tag, else through the branch).
  return { treeSha: (await readCommitRef(opts.mirrorDir, 'HEAD'))?.toLowerCase() ?? null };
}

async function cleanup(opts: { mirrorDir: string; treeDir: string }): Promise<void> {
  await rm(opts.mirrorDir, { recursive: true, force: true });
  await rm(opts.treeDir, { recursive: true, force: true });
}
