// Repository URLs in the repo service: the comparison form and the write/fetch-time check are
// @capstan/policy's (one normaliser and one check for the api's sourceRepos and Application
// checks and this service's credential selection); here they become field-named ValidationErrors.
import { repoUrlProblem, type RepoUrlOptions } from '@capstan/policy';
import { ValidationError } from '@capstan/service';

export { isSshUrl, normalizeRepoUrl, redactRepoUrl, sameRepoUrl } from '@capstan/policy';

/**
 * Checks a repository URL before it is stored or fetched (see repoUrlProblem): http(s), ssh or
 * scp-like only (file:// when the operator allows it), nothing git or ssh could take for an
 * option, and no credentials inside the URL (they belong in a credential, where they are encrypted).
 */
export function validateRepoUrl(url: string, field = 'url', opts: RepoUrlOptions = {}): string {
  const problem = repoUrlProblem(url, opts);
  if (problem) throw new ValidationError([{ field, description: problem }]);
  return url.trim();
}
