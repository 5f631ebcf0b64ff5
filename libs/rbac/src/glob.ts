// RBAC patterns match through the project's one glob engine (@capstan/glob), as Argo CD matches
// them with gobwas/glob in glob mode: no separators, so `*` spans any run of characters, `/`
// included (`team-a/*` matches every application of team-a, `*` matches `a/b`); `?`, `[...]` and
// `{a,b}` as gobwas has them. A pattern that does not compile matches nothing, as in Argo CD;
// parsePolicyCsv refuses such patterns at write time, so that only happens to stored lines that
// predate a stricter rule. Linear in pattern × value whatever the pattern (issue 10: minimatch
// backtracked for minutes on `*a*a*a*a*a*a*a*a*a*a*a*b`).
import { cachedGlob, GlobSyntaxError } from '@capstan/glob';

/** Whether `value` (a request's resource, action or object) matches an RBAC `pattern`. */
export function rbacMatch(value: string, pattern: string): boolean {
  try {
    return cachedGlob(pattern).match(value);
  } catch (err) {
    if (err instanceof GlobSyntaxError) return false;
    throw err;
  }
}
