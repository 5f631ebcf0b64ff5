// Keeps every read inside the checked-out repository: application paths may not climb out with
// `..` or be absolute, and symbolic links pointing outside the repository are refused (as Argo CD
// refuses out-of-bounds symlinks), because a tool following one would read the service's files.
import { lstat, readdir, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { repoPathProblem } from '@capstan/policy';
import { PathEscapeError, PathNotFoundError } from './manifest-errors.js';

export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The absolute directory of an application path inside a checkout. `where` names repository and
 * revision for error messages.
 */
export async function resolveAppDirectory(root: string, appPath: string, where: string): Promise<string> {
  // The rule the api applied when the Application was written (@capstan/policy), checked again here.
  const problem = repoPathProblem(appPath);
  if (problem) throw new PathEscapeError(`path ${JSON.stringify(appPath)} ${problem} (${where})`);
  const cleaned = appPath.trim() === '' ? '.' : appPath.trim();
  const target = path.resolve(root, cleaned);
  if (!isInside(root, target)) throw new PathEscapeError(`path ${cleaned} escapes the repository (${where})`);
  let real: string;
  try {
    real = await realpath(target);
  } catch {
    throw new PathNotFoundError(`path ${cleaned} not found in ${where}`);
  }
  if (!isInside(await realpath(root), real))
    throw new PathEscapeError(`path ${cleaned} resolves outside the repository (${where})`);
  if (!(await stat(real)).isDirectory())
    throw new PathNotFoundError(`path ${cleaned} is not a directory in ${where}`);
  return real;
}

/** Repository-relative paths of symbolic links whose target lies outside the repository. */
export async function findEscapingSymlinks(root: string): Promise<string[]> {
  const realRoot = await realpath(root);
  const escaping: string[] = [];
  const stack = [realRoot];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    for (const name of await readdir(dir)) {
      const full = path.join(dir, name);
      const info = await lstat(full);
      if (info.isDirectory()) stack.push(full);
      else if (info.isSymbolicLink()) {
        const target = path.resolve(dir, await readlink(full));
        const real = await realpath(full).catch(() => null);
        // Dangling links are judged by where they point; live ones by where they really end.
        if (!isInside(realRoot, target) || (real !== null && !isInside(realRoot, real)))
          escaping.push(path.relative(realRoot, full));
      }
    }
  }
  return escaping.sort();
}
