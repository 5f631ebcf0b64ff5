// A repository served by the test git server: a bare repository (what clients clone) plus a
// private work tree the helpers commit through, so tests describe content, not git plumbing.
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { git } from './git-command.js';

/** File content: text, bytes, a symbolic link, or null to delete the path. */
export type FileContent = string | Uint8Array | { symlink: string } | null;

export interface CommitOptions {
  /** Branch to commit on (created from the current default branch when missing). Default `main`. */
  branch?: string;
  message?: string;
}

export class TestRepository {
  constructor(
    /** Repository name as served, e.g. `team-a/apps.git`. */
    readonly name: string,
    /** Clone URL without credentials. */
    readonly url: string,
    /** Path of the bare repository on disk. */
    readonly bareDir: string,
    private readonly workDir: string,
    /** `ssh://git@127.0.0.1:<port>/<name>` when the server runs SSH, else ''. */
    readonly sshUrl = '',
  ) {}

  /** Writes (or deletes) files, commits them on a branch and pushes; returns the commit SHA. */
  async commit(files: Record<string, FileContent>, options: CommitOptions = {}): Promise<string> {
    const branch = options.branch ?? 'main';
    await this.checkout(branch);
    for (const [file, content] of Object.entries(files)) {
      const target = path.join(this.workDir, file);
      if (!target.startsWith(this.workDir + path.sep))
        throw new Error(`file path escapes the repository: ${file}`);
      await rm(target, { force: true, recursive: true });
      if (content === null) continue;
      await mkdir(path.dirname(target), { recursive: true });
      if (typeof content === 'object' && !(content instanceof Uint8Array))
        await symlink(content.symlink, target);
      else await writeFile(target, content);
    }
    await git(this.workDir, ['add', '--all']);
    await git(this.workDir, ['commit', '--allow-empty', '--quiet', '-m', options.message ?? 'test commit']);
    await git(this.workDir, ['push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`]);
    return this.sha(branch);
  }

  /** Creates a branch at a revision (default: main's head). */
  async branch(name: string, from = 'main'): Promise<string> {
    const sha = await this.sha(from);
    await git(this.bareDir, ['update-ref', `refs/heads/${name}`, sha]);
    return sha;
  }

  /** Creates an annotated tag at a revision (default: main's head). */
  async tag(name: string, at = 'main'): Promise<string> {
    const sha = await this.sha(at);
    await git(this.bareDir, ['tag', '-a', '-m', `tag ${name}`, name, sha]);
    return sha;
  }

  /** Points the bare repository's HEAD at a branch. */
  async setDefaultBranch(branch: string): Promise<void> {
    await git(this.bareDir, ['symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
  }

  /** The commit SHA a revision (branch, tag, HEAD, SHA) names in the served repository. */
  async sha(revision = 'HEAD'): Promise<string> {
    return (await git(this.bareDir, ['rev-parse', '--verify', '--quiet', `${revision}^{commit}`])).trim();
  }

  private async checkout(branch: string): Promise<void> {
    const exists = await git(this.bareDir, ['branch', '--list', branch]);
    await git(this.workDir, ['fetch', '--quiet', 'origin']);
    if (exists.trim()) {
      await git(this.workDir, ['checkout', '--quiet', '-B', branch, `origin/${branch}`]);
      return;
    }
    const hasMain = (await git(this.bareDir, ['branch', '--list', 'main'])).trim() !== '';
    if (hasMain) await git(this.workDir, ['checkout', '--quiet', '-B', branch, 'origin/main']);
    // First commit of an empty repository: start the branch unborn.
    else await git(this.workDir, ['symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
  }
}
