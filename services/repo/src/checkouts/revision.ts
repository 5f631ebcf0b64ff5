// How a requested revision is looked up in a fetched mirror: branches before tags (Argo CD's
// order), full refs as given, HEAD as the remote's default branch, SHAs (full or abbreviated) as
// commits. Pure, so the rules are testable without git.

export const FULL_SHA = /^[0-9a-f]{40}$/i;
const SHORT_SHA = /^[0-9a-f]{7,39}$/i;

/** The ref names to try, in order, for a revision in a mirror that keeps the remote's refs. */
export function revisionCandidates(revision: string): string[] {
  const rev = revision.trim();
  if (rev === '' || rev === 'HEAD') return ['refs/capstan/HEAD'];
  if (FULL_SHA.test(rev)) return [rev.toLowerCase()];
  if (rev.startsWith('refs/')) return [rev];
  const named = [`refs/heads/${rev}`, `refs/tags/${rev}`];
  return SHORT_SHA.test(rev) ? [...named, rev.toLowerCase()] : named;
}

/** Refuses revisions git could read as options or revision expressions. */
export function isAcceptableRevision(revision: string): boolean {
  const rev = revision.trim();
  if (rev === '') return true;
  return rev.length <= 255 && !rev.startsWith('-') && !/[\s~^:?*[\\\0]|\.\.|@\{/.test(rev);
}
