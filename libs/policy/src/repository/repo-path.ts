// Application source paths are relative to the repository root and stay inside it. The api refuses
// an escaping path when the Application is written; the repo service refuses it again when it
// renders (where symbolic links are also checked against the checkout on disk).

/**
 * Why an Application's source path cannot name a directory inside the repository, or undefined.
 * '' and '.' are the root. Refused: absolute paths (`/etc`, `C:\…`, `\\host\share`), NUL or other
 * control characters, backslashes (a separator on some systems, an escape on others), and any
 * path that climbs above the root after `.`/`..` segments are resolved (`a/../../etc`).
 */
export function repoPathProblem(path: string): string | undefined {
  if (path.length > 4096) return 'must be at most 4096 characters';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'must not contain NUL or control characters';
  if (path.includes('\\')) return 'must use "/" as separator (no backslashes)';
  const trimmed = path.trim();
  if (trimmed.startsWith('/') || /^[a-z]:/i.test(trimmed))
    return 'must be relative to the repository root, not absolute';
  let depth = 0;
  for (const segment of trimmed.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      depth -= 1;
      if (depth < 0) return 'must stay inside the repository (it climbs above the root with "..")';
    } else depth += 1;
  }
  return undefined;
}
