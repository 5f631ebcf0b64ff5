// Argo CD matches RBAC patterns as globs without path separators: `*` spans any run of characters,
// `/` included, so `team-a/*` matches every application of team-a and `*` matches `a/b`. minimatch
// treats `/` as a separator, so both sides are compared with `/` swapped for a character that never
// appears in names; `?`, `[...]` and `{a,b}` keep their meaning.
import { minimatch } from 'minimatch';

const SLASH = '\u001f';
const options = { dot: true, nonegate: true, nocomment: true, noext: true, noglobstar: true } as const;

export function globMatch(value: string, pattern: string): boolean {
  if (pattern === '*') return true;
  if (!/[*?[{]/.test(pattern)) return value === pattern;
  return minimatch(value.replaceAll('/', SLASH), pattern.replaceAll('/', SLASH), options);
}
