// Repository URLs are compared the way Argo CD compares them (git.NormalizeGitURL): trimmed,
// lower-cased, without a trailing ".git", scp-style SSH (`git@host:org/repo`) written as a path,
// and without the `ssh://` scheme, so `git@github.com:Org/Repo.git` and
// `ssh://git@github.com/org/repo` are the same repository.

const SCP_LIKE = /^[a-z0-9._-]+@[a-z0-9.-]+:(?!\d+\/)/;

export function normalizeGitUrl(url: string): string {
  let repo = url.trim().toLowerCase();
  if (!repo.startsWith('ssh://') && SCP_LIKE.test(repo)) {
    repo = `ssh://${repo.replace(':', '/')}`;
  }
  if (repo.endsWith('.git')) repo = repo.slice(0, -'.git'.length);
  if (repo.startsWith('ssh://')) repo = repo.slice('ssh://'.length);
  return repo;
}
