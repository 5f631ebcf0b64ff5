// How a requested revision is looked up in a mirror. Mirrors keep the remote's branches under
// refs/remotes/origin/ (where `git clone` puts them, and where every later fetch updates them), its
// tags under refs/tags/, and its HEAD under refs/capstan/HEAD (after a fetch) or
// refs/remotes/origin/HEAD (after the clone). Branches come before tags (Argo CD's order), full refs
// are taken as given, SHAs (full or abbreviated) as commits. Pure, so testable without git.

export const FULL_SHA = /^[0-9a-f]{40}$/i;
const SHORT_SHA = /^[0-9a-f]{7,39}$/i;

/** The ref names to try, in order, for a revision in a mirror that keeps the remote's refs. */
export function revisionCandidates(revision: string): string[] {
  const rev = revision.trim();
  if (rev === '' || rev === 'HEAD') return ['refs/capstan/HEAD', 'refs/remotes/origin/HEAD'];
  if (FULL_SHA.test(rev)) return [rev.toLowerCase()];
  if (rev.startsWith('refs/heads/')) return [`refs/remotes/origin/${rev.slice('refs/heads/'.length)}`];
  if (rev.startsWith('refs/')) return [rev];
  const named = [`refs/remotes/origin/${rev}`, `refs/tags/${rev}`];
  return SHORT_SHA.test(rev) ? [...named, rev.toLowerCase()] : named;
}

/** The branch or tag `git clone --branch` may check out directly, or null (HEAD, SHAs, full refs). */
export function cloneBranchHint(revision: string): string | null {
  const rev = revision.trim();
  if (rev === '' || rev === 'HEAD' || SHORT_SHA.test(rev) || FULL_SHA.test(rev) || rev.startsWith('refs/'))
    return null;
  return rev;
}

/** Refuses revisions git could read as options or revision expressions. */
export function isAcceptableRevision(revision: string): boolean {
  const rev = revision.trim();
  if (rev === '') return true;
  return rev.length <= 255 && !rev.startsWith('-') && !/[\s~^:?*[\\\0]|\.\.|@\{/.test(rev);
}
